/** State that comes from the API: loaded when the component mounts (and again on `reload`), with its error. */
import { useCallback, useEffect, useRef, useState } from "preact/hooks"
import { Refusal } from "../Client.js"

/** Why an action failed: the API's message, and the fields it refused (`Refusal`). */
export type Failure = Pick<Refusal, "message" | "fields">

/** A value being loaded: `value` once it is, `error` (the API's message) when it failed. */
export interface Loaded<A> {
  readonly value: A | undefined
  readonly error: string | undefined
  readonly loading: boolean
  readonly reload: () => void
}

/** Loads `load()` now and whenever `deps` change or `reload` is called; the last answer wins. */
export const useLoaded = <A>(load: () => Promise<A>, deps: ReadonlyArray<unknown>): Loaded<A> => {
  const [state, setState] = useState<{ value: A | undefined; error: string | undefined; loading: boolean }>({
    value: undefined,
    error: undefined,
    loading: true
  })
  const [round, setRound] = useState(0)
  useEffect(() => {
    let current = true
    setState((s) => ({ ...s, loading: true }))
    load().then(
      (value) => current && setState({ value, error: undefined, loading: false }),
      (error: unknown) =>
        current &&
        setState({ value: undefined, error: error instanceof Error ? error.message : String(error), loading: false })
    )
    return () => {
      current = false
    }
  }, [...deps, round])
  const reload = useCallback(() => setRound((r) => r + 1), [])
  return { ...state, reload }
}

/** One page of a list: its items, and the token of the next page when there is one. */
export interface Page<A> {
  readonly items: ReadonlyArray<A>
  readonly next?: string | undefined
}

/**
 * A list loaded a page at a time: the items so far, `more` (to load the next page) while there is one, and `reload`
 * (from the first page again). Loaded now and whenever `deps` change; answers for earlier `deps` are dropped.
 */
export const usePages = <A>(
  load: (pageToken: string | undefined) => Promise<Page<A>>,
  deps: ReadonlyArray<unknown>
) => {
  const [state, setState] = useState<{
    items: ReadonlyArray<A>
    next: string | undefined
    error: string | undefined
    loading: boolean
  }>({ items: [], next: undefined, error: undefined, loading: true })
  const [round, setRound] = useState(0)
  const generation = useRef(0)
  const fetchPage = (pageToken: string | undefined) => {
    const mine = generation.current
    setState((s) => ({ ...s, loading: true }))
    load(pageToken).then(
      (page) =>
        mine === generation.current && setState((s) => ({
          items: pageToken === undefined ? page.items : [...s.items, ...page.items],
          next: page.next === "" ? undefined : page.next,
          error: undefined,
          loading: false
        })),
      (error: unknown) =>
        mine === generation.current &&
        setState((s) => ({ ...s, error: error instanceof Error ? error.message : String(error), loading: false }))
    )
  }
  useEffect(() => {
    generation.current++
    fetchPage(undefined)
  }, [...deps, round])
  const next = state.next
  return {
    ...state,
    more: next === undefined || state.loading ? undefined : () => fetchPage(next),
    reload: useCallback(() => setRound((r) => r + 1), [])
  }
}

/** An action a person starts (a form's submit, a delete): busy while it runs, its error kept until the next try. */
export const useAction = <Args extends ReadonlyArray<unknown>>(act: (...args: Args) => Promise<unknown>) => {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<Failure | undefined>(undefined)
  /** Runs the action; true when it succeeded. */
  const start = async (...args: Args): Promise<boolean> => {
    setBusy(true)
    setError(undefined)
    try {
      await act(...args)
      return true
    } catch (e) {
      setError(e instanceof Refusal ? e : { message: e instanceof Error ? e.message : String(e), fields: [] })
      return false
    } finally {
      setBusy(false)
    }
  }
  return { busy, error, start }
}
