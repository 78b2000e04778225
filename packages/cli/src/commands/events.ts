/**
 * `arbor events`: the audit trail and its webhooks. `list` reads entries page by page; `watch` follows the log as
 * Server-Sent Events, printing each entry as it arrives, and reconnects from the last entry it printed when the
 * connection drops; `subscriptions` creates, lists and deletes webhooks.
 */
import { EventStream, Wire } from "@arbor/api"
import * as ErrorBody from "@arbor/api/ErrorBody"
import * as Names from "@arbor/api/Names"
import * as Resources from "@arbor/api/Resources"
import type { EntryListOptions, WatchOptions } from "@arbor/core/AuditTrail"
import type * as ChangeLog from "@arbor/core/ChangeLog"
import type { Subscription } from "@arbor/core/Subscription"
import { Args, Command, Options } from "@effect/cli"
import { HttpClient, HttpClientRequest } from "@effect/platform"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Auth from "../Auth.js"
import * as Failure from "../Failure.js"
import * as Help from "../Help.js"
import type * as Output from "../Output.js"
import * as Where from "../Where.js"
import * as Resource from "./iam/resource.js"
import {
  allPages,
  common,
  connect,
  limit,
  output,
  parent,
  print,
  printRows,
  resolveGroup,
  resolveIdentity,
  time
} from "./shared.js"

/** The type without its common prefix and version: `iam.group.created`. */
const shortType = (type: string) => type.replace(/^dev\.chainguard\.api\./, "").replace(/\.v1$/, "")

/** Names for uids, where the command looked them up; a uid it did not stays a uid. */
interface Named {
  readonly groups: ReadonlyMap<string, string>
  readonly actors: ReadonlyMap<string, string>
}

const unnamed: Named = { groups: new Map(), actors: new Map() }

/** What the entry's resource is called (`Names.ofEntry`), else its uid. */
const subjectOf = (e: ChangeLog.Entry) => Names.ofEntry(e) ?? e.subject

/** An entry's row: names for a person, each uid in the JSON and in `-o wide`. */
const entryShape = (named: Named): Output.Shape<ChangeLog.Entry> => ({
  json: Wire.ChangeEntry,
  columns: [
    { heading: "TIME", value: (e) => time(e.time) },
    { heading: "EVENT", value: Names.ofChange },
    { heading: "SUBJECT", value: subjectOf },
    { heading: "ACTOR", value: (e) => e.actor.email ?? named.actors.get(e.actor.subject) ?? e.actor.subject },
    { heading: "GROUP", value: (e) => named.groups.get(e.group) ?? e.group },
    { heading: "CHANGED", value: (e) => Names.ofChangedFields(Names.changedFields(e)) },
    { heading: "TYPE", value: (e) => shortType(e.type), wide: true },
    { heading: "SUBJECT UID", value: (e) => e.subject, wide: true },
    { heading: "GROUP UID", value: (e) => e.group, wide: true },
    { heading: "REQUEST", value: (e) => e.requestId ?? "", wide: true },
    { heading: "CURSOR", value: (e) => e.position, wide: true }
  ]
})

/** The names of the groups and actors of `entries`, each looked up once. */
const namesOf = (client: Parameters<typeof resolveGroup>[0], entries: ReadonlyArray<ChangeLog.Entry>) =>
  Effect.gen(function*() {
    const names = yield* Names.reader(client)
    const lookUp = (uids: Iterable<string>, name: (uid: string) => Effect.Effect<string>) =>
      Effect.map(
        Effect.forEach(new Set(uids), (uid) => Effect.map(name(uid), (found) => [uid, found] as const), {
          concurrency: 4
        }),
        (pairs) => new Map(pairs)
      )
    const people = entries.filter((e) => e.actor.email === undefined && e.actor.subject !== "system")
    return {
      groups: yield* lookUp(entries.map((e) => e.group), names.group),
      actors: yield* lookUp(people.map((e) => e.actor.subject), names.identity)
    }
  })

/** `--<name> <placeholder>`, which may be left out. */
const optionalText = (name: string, placeholder: string, description: string) =>
  Options.text(name).pipe(Options.withPseudoName(placeholder), Options.withDescription(description), Options.optional)

const filters = {
  group: optionalText("group", "group", "only entries of this group and the groups below it: a uid or a path of names"),
  types: Options.text("type").pipe(
    Options.withPseudoName("type"),
    Options.withDescription("only entries of this CloudEvent type (dev.chainguard.api.iam.group.created.v1)"),
    Options.repeated
  ),
  kinds: Options.text("kind").pipe(
    Options.withPseudoName("kind"),
    Options.withDescription("only entries about resources of this kind (group, role_binding, identity, …)"),
    Options.repeated
  ),
  subject: optionalText("subject", "uid", "only entries about this resource"),
  actor: optionalText(
    "actor",
    "identity",
    "only entries whose actor is this identity (its uid, or its group's path and its name), or system"
  )
}

type Filters = {
  readonly group: Option.Option<string>
  readonly types: ReadonlyArray<string>
  readonly kinds: ReadonlyArray<string>
  readonly subject: Option.Option<string>
  readonly actor: Option.Option<string>
}

/** The filters as the API's parameters; a group named by path is looked up first. */
const parameters = (client: Parameters<typeof resolveGroup>[0], flags: Filters) =>
  Effect.gen(function*() {
    return {
      ...(Option.isSome(flags.group) ? { descendantsOf: yield* resolveGroup(client, flags.group.value) } : {}),
      ...(flags.types.length > 0 ? { types: flags.types } : {}),
      ...(flags.kinds.length > 0 ? { kinds: flags.kinds } : {}),
      subject: Option.getOrUndefined(flags.subject),
      ...(Option.isSome(flags.actor)
        ? { actor: flags.actor.value === "system" ? "system" : yield* resolveIdentity(client, flags.actor.value) }
        : {})
    }
  })

const since = optionalText("since", "time", "only entries at or after this time (RFC 3339)")
const until = optionalText("until", "time", "only entries before this time (RFC 3339)")
const newestFirst = Options.boolean("newest-first").pipe(Options.withDescription("newest entries first"))

const list = Command.make(
  "list",
  { ...common, output, limit, ...filters, since, until, newestFirst },
  (flags) =>
    Effect.gen(function*() {
      const client = yield* connect(flags)
      const rows = yield* allPages(
        (urlParams: EntryListOptions) => client.auditTrail.list({ urlParams }),
        (page) => page.events,
        {
          ...(yield* parameters(client, flags)),
          since: Option.getOrUndefined(flags.since),
          until: Option.getOrUndefined(flags.until),
          ...(flags.newestFirst ? { orderBy: "time desc" } : {})
        },
        flags.limit
      )
      const named = flags.output === "table" || flags.output === "wide" ? yield* namesOf(client, rows) : unnamed
      yield* printRows(rows, entryShape(named), flags.output)
    })
).pipe(Command.withDescription("List who changed what. Example: arbor events list --group acme --limit 20"))

const decodeEntry = Schema.decodeUnknown(Schema.parseJson(Wire.ChangeEntry))

/** An entry as one line: a table row without headings, or its JSON. */
const line = (entry: ChangeLog.Entry, format: Output.Format) =>
  format === "json"
    ? JSON.stringify(Schema.encodeSync(Wire.ChangeEntry)(entry))
    : format === "id"
    ? entry.id
    : entryShape(unnamed).columns.filter((c) => format === "wide" || c.wide !== true).map((c) => c.value(entry))
      .join("  ")

/**
 * The server ended the stream because a request of ours would now be refused: the refusal ends the command, unless
 * it is only the token's expiry, when the next connection goes on with a fresh one (`Auth.token` refreshes it).
 */
class Expired {
  readonly _tag = "Expired"
}

const ended = (data: string) =>
  Effect.gen(function*() {
    const body = Schema.decodeUnknownOption(Schema.parseJson(ErrorBody.ErrorBody))(data)
    const error = Option.isSome(body) ? ErrorBody.parse(body.value) : undefined
    if (error?._tag === "Unauthenticated" && error.reason === "ERR_JWT_EXPIRED") {
      return yield* Effect.fail(new Expired())
    }
    return yield* Effect.fail(error ?? new Failure.CommandFailed({ message: "the server ended the stream" }))
  })

const watch = Command.make(
  "watch",
  {
    ...common,
    output,
    ...filters,
    after: optionalText("after", "cursor", "start after this entry's cursor (default: with what happens from now on)")
  },
  (flags) =>
    Effect.gen(function*() {
      const where = yield* Where.endpoints(flags)
      const client = yield* connect(flags)
      const options: WatchOptions = yield* parameters(client, flags)
      let cursor = Option.getOrUndefined(flags.after)
      const http = yield* HttpClient.HttpClient
      /** One connection: the entries it brings, printed as they come; its end or failure, for the retry. */
      const connection = Effect.gen(function*() {
        const token = yield* Auth.token(where)
        const url = new URL("/events/v2beta1/events:watch", where.api)
        for (const [key, value] of Object.entries({ ...options, after: cursor })) {
          if (key === "descendantsOf" && typeof value === "string") url.searchParams.set("uidp.descendants_of", value)
          else if ((key === "types" || key === "kinds") && Array.isArray(value)) {
            for (const t of value) url.searchParams.append(key === "types" ? "type" : "kind", t)
          } else if (typeof value === "string") url.searchParams.set(key, value)
        }
        const response = yield* http.execute(
          HttpClientRequest.get(url).pipe(
            HttpClientRequest.bearerToken(token),
            HttpClientRequest.setHeader("accept", "text/event-stream")
          )
        )
        if (response.status !== 200) {
          const body = yield* Effect.orElseSucceed(response.json, () => undefined)
          const decoded = Schema.decodeUnknownOption(ErrorBody.ErrorBody)(body)
          const error = Option.isSome(decoded) ? ErrorBody.parse(decoded.value) : undefined
          return yield* Effect.fail(
            error ?? new Failure.CommandFailed({ message: `the server answered ${response.status}` })
          )
        }
        const messagesOf = EventStream.reader()
        yield* response.stream.pipe(
          Stream.decodeText(),
          Stream.runForEach((chunk) =>
            Effect.forEach(messagesOf(chunk), (message) =>
              Effect.gen(function*() {
                if (message.event === EventStream.endEvent) return yield* ended(message.data)
                const entry = yield* decodeEntry(message.data)
                yield* print(line(entry, flags.output))
                cursor = message.id ?? entry.position
              }))
          ),
          // Ended at the token's expiry: the next connection goes on with a fresh token.
          Effect.catchTag("Expired", () => Effect.void)
        )
      }).pipe(Effect.scoped)
      // A dropped connection is taken up again from the last entry printed; the API's refusals end the command.
      yield* connection.pipe(
        Effect.retry({
          while: (error) => !ErrorBody.isArborError(error) && !(error instanceof Failure.CommandFailed),
          schedule: Schedule.exponential("500 millis").pipe(Schedule.union(Schedule.spaced("10 seconds")))
        }),
        Effect.forever
      )
    })
).pipe(
  Command.withDescription(
    "Follow who changes what, as it happens (Ctrl-C to stop). Example: arbor events watch --group acme -o json"
  )
)

/** What a subscription whose delivery is unanswered waits on: its sink, since when. */
const waitingSince = (s: Subscription) =>
  s.health?.sendingSince === undefined ? "" : `waiting for its sink since ${time(s.health.sendingSince)}`

const subscriptionShape: Output.Shape<Subscription> = {
  json: Wire.Subscription.v2,
  columns: [
    { heading: "UID", value: (s) => s.uid },
    { heading: "SINK", value: (s) => s.sink },
    // How its deliveries stand: ACTIVE, FAILING (with the last error) or STOPPED (with why).
    { heading: "STATE", value: (s) => s.health?.state ?? "" },
    { heading: "PENDING", value: (s) => String(s.health?.pending ?? ""), wide: true },
    {
      heading: "LAST DELIVERED",
      value: (s) => s.health?.lastDeliveredTime === undefined ? "" : time(s.health.lastDeliveredTime),
      wide: true
    },
    { heading: "WHY", value: (s) => s.health?.reason ?? s.health?.lastError ?? waitingSince(s), wide: true },
    { heading: "CREATED", value: (s) => time(s.createTime), wide: true }
  ]
}

const subscriptionResource = Resource.make({
  query: Resources.subscriptions.query,
  shape: subscriptionShape,
  list: (client, urlParams) => client.subscriptions.list({ urlParams }),
  items: (page) => page.subscriptions,
  get: (client, uid) => client.subscriptions.get({ path: { uid } }),
  delete: (client, uid) => client.subscriptions.delete({ path: { uid } }),
  ref: Resource.byUid("subscription")
})

/** `arbor events subscriptions`. */
const subscriptions = Command.make("subscriptions").pipe(
  Command.withDescription("Webhooks that receive every change of a group and of the groups below it."),
  Help.withSubcommands([
    Resource.list(subscriptionResource, "List subscriptions. Example: arbor events subscriptions list --parent acme"),
    Command.make(
      "create",
      {
        ...common,
        output,
        parent,
        sink: Args.text({ name: "sink" }).pipe(Args.withDescription("where to deliver: an https:// URL"))
      },
      (flags) =>
        Effect.gen(function*() {
          const client = yield* connect(flags)
          const group = yield* resolveGroup(client, flags.parent)
          const created = yield* client.subscriptions.create({ path: { uid: group }, payload: { sink: flags.sink } })
          yield* printRows([created], subscriptionShape, flags.output)
        })
    ).pipe(
      Command.withDescription(
        "Subscribe a webhook to a group's changes. Example: arbor events subscriptions create https://hooks.example.com/arbor --parent acme"
      )
    ),
    Resource.describe(
      subscriptionResource,
      "Show one subscription. Example: arbor events subscriptions describe <uid>"
    ),
    Resource.remove(subscriptionResource, "Delete a subscription. Example: arbor events subscriptions delete <uid>")
  ])
)

/** `arbor events`. */
export const events = Command.make("events").pipe(
  Command.withDescription("The audit trail (who changed what, when), and webhooks that receive it."),
  Help.withSubcommands([list, watch, subscriptions])
)
