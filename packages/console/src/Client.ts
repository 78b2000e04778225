/**
 * The API's typed client in the browser (`@arbor/api`'s declaration over `fetch`), as the signed-in person: every
 * request carries their token and nothing else, so the console can do exactly what they may. `run` turns a call into
 * a promise whose failure is the API's own message.
 */
import { EventStream, Wire } from "@arbor/api"
import * as ApiClient from "@arbor/api/Client"
import * as Names from "@arbor/api/Names"
import * as Capability from "@arbor/core/Capability"
import type * as ChangeLog from "@arbor/core/ChangeLog"
import { InvalidArgument, PermissionDenied } from "@arbor/core/Errors"
import { FetchHttpClient } from "@effect/platform"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"

/** The typed client for `token`, calling the server that served the console. */
export const make = (token: string) =>
  ApiClient.make({ baseUrl: location.origin, token }).pipe(Effect.provide(FetchHttpClient.layer))

/** The typed client. */
export type Client = ApiClient.Client

/** Names for uids as the person may read them, each looked up once per session (`@arbor/api`'s `Names`). */
export type Reader = Effect.Effect.Success<ReturnType<typeof Names.reader>>

/** The reader of `client`'s names. */
export const reader = (client: Client): Reader => Effect.runSync(Names.reader(client))

/**
 * What a failed call says to a person: a refusal for want of a capability in words ("You cannot list folders
 * here."), else the API's message (an error body's), else what went wrong on the way.
 */
export const messageOf = (error: unknown): string =>
  error instanceof PermissionDenied && error.capability !== ""
    ? `You cannot ${Capability.inWords(error.capability)} here.`
    : typeof error === "object" && error !== null && "message" in error && typeof error.message === "string" &&
        error.message !== ""
    ? error.message
    : String(error)

/** What the console does when the server no longer accepts the session's token (a bad signature, its end). */
let tokenRefused: ((reason: string) => void) | undefined

/** Calls `handler` with the server's reason whenever a call is refused for its token (401); undone by the result. */
export const whenTokenRefused = (handler: (reason: string) => void) => {
  tokenRefused = handler
  return () => {
    if (tokenRefused === handler) tokenRefused = undefined
  }
}

const isUnauthenticated = (error: unknown) =>
  typeof error === "object" && error !== null && "_tag" in error && error._tag === "Unauthenticated"

/**
 * A call the API refused: its message, and for a request with bad fields each field (as the API names it) with what
 * it takes, so a form can say it in its own labels.
 */
export class Refusal extends Error {
  constructor(
    message: string,
    readonly fields: ReadonlyArray<{ readonly field: string; readonly description: string }>
  ) {
    super(message)
  }
}

const fieldsOf = (error: unknown) => error instanceof InvalidArgument ? error.violations : []

/**
 * Runs a call of `client`; its failure becomes a `Refusal` with the API's message. A call refused for its token ends
 * the session (`whenTokenRefused`): no view is left whose every call fails.
 */
export const run = <A, E>(effect: Effect.Effect<A, E>): Promise<A> =>
  Effect.runPromise(Effect.either(effect)).then((result) => {
    if (Either.isRight(result)) return result.right
    const error = result.left
    if (isUnauthenticated(error)) tokenRefused?.(messageOf(error))
    throw new Refusal(messageOf(error), fieldsOf(error))
  })

const decodeEntry = Schema.decodeUnknownSync(Schema.parseJson(Wire.ChangeEntry))

/**
 * Follows the change log (`events:watch`) below `group` after the entry at `after` (from now on without it),
 * calling `onOpen` once the server streams and `onEntry` with each entry as it commits, until `signal` aborts; a
 * dropped connection is taken up again from the last entry received. Fails with the API's message when the server
 * refuses.
 */
export const watch = async (options: {
  readonly token: string
  readonly group: string
  readonly after: string | undefined
  /** Only entries about these kinds of resource, by this actor (the trail's filters). */
  readonly kinds?: ReadonlyArray<string> | undefined
  readonly actor?: string | undefined
  readonly onOpen: () => void
  readonly onEntry: (entry: ChangeLog.Entry) => void
  readonly signal: AbortSignal
}): Promise<void> => {
  const { group, onEntry, signal, token } = options
  let cursor = options.after
  while (!signal.aborted) {
    const url = new URL("/events/v2beta1/events:watch", location.origin)
    url.searchParams.set("uidp.descendants_of", group)
    for (const kind of options.kinds ?? []) url.searchParams.append("kind", kind)
    if (options.actor !== undefined) url.searchParams.set("actor", options.actor)
    if (cursor !== undefined) url.searchParams.set("after", cursor)
    try {
      const response = await fetch(url, {
        headers: { authorization: `Bearer ${token}`, accept: "text/event-stream" },
        signal
      })
      if (response.status !== 200 || response.body === null) {
        const body: unknown = await response.json().catch(() => undefined)
        throw new Refused(messageOf(body))
      }
      options.onOpen()
      const messagesOf = EventStream.reader()
      const text = response.body.pipeThrough(new TextDecoderStream()).getReader()
      for (let chunk = await text.read(); !chunk.done; chunk = await text.read()) {
        for (const message of messagesOf(chunk.value)) {
          // The server ended the stream: a request of this person's would now be refused, and says why.
          if (message.event === EventStream.endEvent) throw new Refused(messageOf(JSON.parse(message.data)))
          const entry = decodeEntry(message.data)
          cursor = message.id ?? entry.position
          onEntry(entry)
        }
      }
    } catch (error) {
      if (error instanceof Refused || signal.aborted) throw error
      await new Promise((resume) => setTimeout(resume, 2000))
    }
  }
}

/** The server refused to stream. */
class Refused extends Error {}
