/** The console's small set of building blocks: messages, forms, tables, buttons. */
import * as Effect from "effect/Effect"
import type { ComponentChildren, InputHTMLAttributes } from "preact"
import { useEffect, useId, useRef, useState } from "preact/hooks"
import { useConnection } from "../Connection.js"
import type { Failure } from "./hooks.js"
import * as Rules from "./rules.js"
import type { Rule } from "./rules.js"

/** The API's refusal, read out by screen readers as it appears. */
export const ErrorMessage = ({ error }: { readonly error: string | Failure | undefined }) =>
  error === undefined ? null : <p class="error" role="alert">{typeof error === "string" ? error : error.message}</p>

/**
 * A refusal in the words of `form`: each field the API refused under the label of the form's input of that name, or
 * of its last name for a field of a part (`Name: must be at most 63 characters`), the API's own name for a field the
 * form does not show.
 */
const inFormWords = (failure: Failure, form: HTMLFormElement | null): string => {
  if (failure.fields.length === 0) return failure.message
  return failure.fields.map(({ description, field }) => {
    // A field the API names by its path (`claimMatch.subject`) is the form's input of its last name (`subject`).
    const input = form?.elements.namedItem(field) ?? form?.elements.namedItem(field.split(".").at(-1) ?? field)
    const label = input instanceof HTMLInputElement || input instanceof HTMLSelectElement
      ? input.labels?.[0]?.textContent ?? field
      : field
    return `${label}: ${description}`
  }).join("; ")
}

/**
 * A labelled input; its hint describes it (read after its name), never names it. With a `rule`, what is typed is
 * checked as it is typed: a value the rule refuses says, in the form's words, what the field takes, and the form is
 * not sent (the input's validity carries the message).
 */
export const Field = (
  props: {
    readonly label: string
    readonly hint?: string | undefined
    readonly rule?: Rule | undefined
  } & InputHTMLAttributes<HTMLInputElement>
) => {
  const { hint, label, onInput, rule, ...input } = props
  const id = useId()
  const element = useRef<HTMLInputElement>(null)
  const [refused, setRefused] = useState<string | undefined>(undefined)
  const check = (element: HTMLInputElement) => {
    const message = rule === undefined || element.value === "" || rule.check(element.value)
      ? undefined
      : `${label}: ${rule.says}`
    element.setCustomValidity(message ?? "")
    setRefused(message)
  }
  // A value given before any typing (a resource being changed) is checked too.
  useEffect(() => {
    if (element.current !== null) check(element.current)
  }, [rule])
  const described = [hint === undefined ? [] : [`${id}-hint`], refused === undefined ? [] : [`${id}-refused`]].flat()
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input
        id={id}
        aria-describedby={described.length === 0 ? undefined : described.join(" ")}
        aria-invalid={refused === undefined ? undefined : true}
        {...input}
        ref={element}
        onInput={(event) => {
          check(event.currentTarget)
          onInput?.(event)
        }}
      />
      {hint === undefined ? null : <small id={`${id}-hint`}>{hint}</small>}
      {refused === undefined ? null : <small id={`${id}-refused`} class="refused">{refused}</small>}
    </div>
  )
}

/** A resource's name (required) and description, each checked by its rule as it is typed; the current ones given. */
export const NameFields = ({ current }: {
  readonly current?: { readonly name?: string | undefined; readonly description?: string | undefined } | undefined
}) => (
  <>
    <Field label="Name" rule={Rules.name} name="name" required autocomplete="off" defaultValue={current?.name} />
    <Field
      label="Description"
      rule={Rules.description}
      name="description"
      autocomplete="off"
      defaultValue={current?.description}
    />
  </>
)

/**
 * A labelled choice among options (value and what a person reads). With `choose`, it starts on "Choose…", which
 * is no choice: a form with a `required` one is not sent until a person picks (a grant is never made of an option
 * nobody chose); `hint` says what the choice means.
 */
export const Choice = (props: {
  readonly label: string
  readonly value: string
  readonly options: ReadonlyArray<readonly [string, string]>
  readonly onChange: (value: string) => void
  readonly choose?: boolean
  readonly required?: boolean
  readonly hint?: ComponentChildren
}) => {
  const id = useId()
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <select
        id={id}
        value={props.value}
        required={props.required}
        aria-describedby={props.hint === undefined ? undefined : `${id}-hint`}
        onChange={(e) => props.onChange((e.currentTarget as HTMLSelectElement).value)}
      >
        {props.choose === true ? <option value="">Choose…</option> : null}
        {props.options.map(([value, text]) => <option key={value} value={value}>{text}</option>)}
      </select>
      {props.hint === undefined ? null : <small id={`${id}-hint`}>{props.hint}</small>}
    </div>
  )
}

/**
 * A form that runs `onSubmit` with its fields' values, shows the API's refusal, and is busy meanwhile; emptied once
 * it succeeded.
 */
export const Form = (props: {
  readonly title: string
  readonly submit: string
  readonly busy: boolean
  readonly error: Failure | undefined
  readonly onSubmit: (values: Record<string, string>) => Promise<boolean>
  /** Keep what was typed after a success (a form asked again and again). */
  readonly keep?: boolean
  /** What a success says (`Folder created.`); `Done.` when not given. */
  readonly done?: string
  readonly children: ComponentChildren
}) => {
  const [notice, setNotice] = useState<string | undefined>(undefined)
  // An error stays until the person changes what they typed: then it is no longer about what they see.
  const [dismissed, setDismissed] = useState<Failure | undefined>(undefined)
  const element = useRef<HTMLFormElement>(null)
  const error = props.error === undefined || props.error === dismissed
    ? undefined
    : inFormWords(props.error, element.current)
  return (
    <form
      ref={element}
      class="card"
      aria-label={props.title}
      onInput={() => {
        setNotice(undefined)
        setDismissed(props.error)
      }}
      onSubmit={(e) => {
        e.preventDefault()
        const form = e.currentTarget
        const data = new FormData(form)
        setNotice(undefined)
        setDismissed(undefined)
        props.onSubmit(Object.fromEntries([...data.entries()].map(([k, v]) => [k, String(v)]))).then((done) => {
          if (!done) return
          setNotice(props.done ?? "Done.")
          if (props.keep !== true) form.reset()
        })
      }}
    >
      <h3>{props.title}</h3>
      {props.children}
      <ErrorMessage error={error} />
      <p class="notice" role="status">{notice}</p>
      <button type="submit" class="primary" disabled={props.busy}>{props.busy ? "Working…" : props.submit}</button>
    </form>
  )
}

/** A table with a caption (its accessible name) and a row per item. */
export function Table<A>(props: {
  readonly caption: string
  readonly columns: ReadonlyArray<readonly [string, (item: A) => ComponentChildren]>
  readonly items: ReadonlyArray<A>
  readonly empty: string
  readonly keyOf: (item: A) => string
}) {
  return props.items.length === 0 ? <p class="empty">{props.empty}</p> : (
    <div class="table">
      <table>
        <caption>{props.caption}</caption>
        <thead>
          <tr>{props.columns.map(([name]) => <th key={name} scope="col">{name}</th>)}</tr>
        </thead>
        <tbody>
          {props.items.map((item) => (
            <tr key={props.keyOf(item)}>
              {props.columns.map(([name, cell]) => <td key={name} data-label={name}>{cell(item)}</td>)}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}

/** Copies `text` to the clipboard, saying so. */
export const CopyButton = ({ text, label }: { readonly text: string; readonly label: string }) => {
  const [copied, setCopied] = useState(false)
  return (
    <button
      type="button"
      onClick={() =>
        navigator.clipboard.writeText(text).then(() => {
          setCopied(true)
          setTimeout(() => setCopied(false), 2000)
        })}
    >
      {copied ? "Copied" : label}
    </button>
  )
}

/** A delete button that asks first, naming what goes and, with `warning`, what else that means. */
export const DeleteButton = (props: {
  readonly what: string
  readonly onDelete: () => void
  readonly busy?: boolean
  readonly warning?: string | undefined
}) => (
  <button
    type="button"
    class="danger"
    disabled={props.busy}
    aria-label={`Delete ${props.what}`}
    onClick={() => {
      if (confirm(`Delete ${props.what}?${props.warning === undefined ? "" : `\n\n${props.warning}`}`)) props.onDelete()
    }}
  >
    Delete
  </button>
)

/** A uid, shortened for reading, whole for screen readers and the copy button beside it. */
export const Uid = ({ uid }: { readonly uid: string }) => (
  <span class="uid">
    <code title={uid}>{uid.length > 24 ? `…${uid.slice(-16)}` : uid}</code>
    <CopyUid uid={uid} />
  </span>
)

/** The small button that copies a whole uid. */
export const CopyUid = ({ uid }: { readonly uid: string }) => {
  const [copied, setCopied] = useState(false)
  return (
    <button
      type="button"
      class="copy"
      aria-label={copied ? "Copied" : `Copy the uid ${uid}`}
      title={copied ? "Copied" : "Copy the uid"}
      onClick={() =>
        navigator.clipboard.writeText(uid).then(() => {
          setCopied(true)
          setTimeout(() => setCopied(false), 2000)
        })}
    >
      {copied ? "✓" : (
        <svg width="14" height="14" viewBox="0 0 16 16" aria-hidden="true" focusable="false">
          <rect x="5" y="5" width="9" height="9" rx="1.5" fill="none" stroke="currentColor" stroke-width="1.5" />
          <path
            d="M3 10.5H2.5A1 1 0 0 1 1.5 9.5v-7a1 1 0 0 1 1-1h7a1 1 0 0 1 1 1V3"
            fill="none"
            stroke="currentColor"
            stroke-width="1.5"
          />
        </svg>
      )}
    </button>
  )
}

/**
 * A group, an identity or a role by its name (a group's path), as the person may read it, its uid to copy beside;
 * the uid alone while the name loads or when the person may not read it.
 */
export const Named = ({ href, kind, uid }: {
  readonly kind: "group" | "identity" | "role"
  readonly uid: string
  /** Where the name leads, when it is a link. */
  readonly href?: string
}) => {
  const { names } = useConnection()
  const [name, setName] = useState<string | undefined>(undefined)
  useEffect(() => {
    let current = true
    Effect.runPromise(names[kind](uid)).then((found) => current && setName(found))
    return () => {
      current = false
    }
  }, [kind, uid])
  const shown = name === undefined || name === uid
    ? <code title={uid}>{uid.length > 24 ? `…${uid.slice(-16)}` : uid}</code>
    : <span title={uid}>{name}</span>
  return (
    <span class="named">
      {href === undefined ? shown : <a href={href}>{shown}</a>}
      <CopyUid uid={uid} />
    </span>
  )
}

/** A time as the person's locale shows it. */
export const Time = ({ at }: { readonly at: { readonly epochMillis: number } | undefined }) =>
  at === undefined
    ? null
    : <time dateTime={new Date(at.epochMillis).toISOString()}>{new Date(at.epochMillis).toLocaleString()}</time>

/** Where a page sits: links from the hierarchy down to the page's parent, each `[text, href]`. */
export const Breadcrumbs = ({ trail }: { readonly trail: ReadonlyArray<readonly [string, string]> }) => (
  <nav aria-label="Breadcrumb" class="crumbs">
    <ol>
      {[["Hierarchy", "#/"] as const, ...trail].map(([text, href]) => (
        <li key={href}>
          <a href={href}>{text}</a>
        </li>
      ))}
    </ol>
  </nav>
)

/** The button that loads a list's next page, while it has one. */
export const ShowMore = ({ more }: { readonly more: (() => void) | undefined }) =>
  more === undefined ? null : <button type="button" class="link" onClick={more}>Show more</button>
