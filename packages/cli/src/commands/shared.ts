/**
 * What the commands share: the options every command takes (`--api`, `--issuer`), `-o` and `--limit`, the typed
 * API client with a valid token, reading every page of a list, and naming a group by uid or path of names.
 */
import { Api } from "@arbor/api"
import type * as ListQuery from "@arbor/api/ListQuery"
import * as Errors from "@arbor/core/Errors"
import type { ListOptions } from "@arbor/core/Lists"
import { Args, Options } from "@effect/cli"
import { HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Auth from "../Auth.js"
import * as Failure from "../Failure.js"
import * as Output from "../Output.js"
import * as Where from "../Where.js"

/** `--api` and `--issuer`. */
export const common = {
  api: Options.text("api").pipe(
    Options.withPseudoName("url"),
    Options.withDescription(`the API's address (default: ARBOR_API, the config file, or ${Where.defaultApi})`),
    Options.optional
  ),
  issuer: Options.text("issuer").pipe(
    Options.withPseudoName("url"),
    Options.withDescription("the token service's address (default: ARBOR_ISSUER, the config file, or the API's)"),
    Options.optional
  )
}

/** `-o`. */
export const output = Options.choice("output", Output.formats).pipe(
  Options.withAlias("o"),
  Options.withDescription("how to print results"),
  Options.withDefault("table" as const)
)

/** `--limit`. */
export const limit = Options.integer("limit").pipe(
  Options.withPseudoName("n"),
  Options.withDescription("print at most this many (default: every page)"),
  Options.optional
)

/** `--parent`: the group to create in, or to list below. */
export const parent = Options.text("parent").pipe(
  Options.withPseudoName("group"),
  Options.withDescription("the group: a uid or a path of names (acme/platform)")
)

/** `<name>`: the name of what a command creates. */
export const nameArg = (what: string) => Args.text({ name: "name" }).pipe(Args.withDescription(`the ${what}'s name`))

/** `--description`. */
export const description = Options.text("description").pipe(
  Options.withDescription("what it is for"),
  Options.optional
)

/** `{ [key]: value }` when an optional flag was given, else nothing: for spreading into a request body. */
export const given = <K extends string, A>(key: K, value: Option.Option<A>): { readonly [k in K]?: A } =>
  Option.isSome(value) ? { [key]: value.value } as { readonly [k in K]: A } : {}

/** Prints a result on stdout. */
export const print = (text: string) => Effect.sync(() => text === "" || process.stdout.write(`${text}\n`))

/** Prints rows in the chosen format. */
export const printRows = <A extends { readonly uid: string } | { readonly id: string }>(
  rows: ReadonlyArray<A>,
  shape: Output.Shape<A>,
  format: Output.Format
) => print(Output.render(rows, shape, format))

/** The API's typed client, with a valid token. */
export const apiClient = (where: Where.Endpoints) =>
  Effect.flatMap(Auth.token(where), (token) =>
    HttpApiClient.make(Api.Api, {
      baseUrl: where.api,
      transformClient: (client) =>
        Api.customMethodPaths(HttpClient.mapRequest(client, HttpClientRequest.bearerToken(token)))
    }))

/** The typed client. */
export type Client = Effect.Effect.Success<ReturnType<typeof apiClient>>

/** The client, for the addresses the flags name. */
export const connect = (flags: Parameters<typeof Where.endpoints>[0]) =>
  Effect.flatMap(Where.endpoints(flags), apiClient)

/** Every item a list selects, page by page (200 a page), up to `limit`. */
export const allPages = <O extends ListOptions, P extends { readonly nextPageToken?: string | undefined }, A, E, R>(
  list: (options: O) => Effect.Effect<P, E, R>,
  items: (page: P) => ReadonlyArray<A>,
  options: O,
  limit: Option.Option<number>
) =>
  Effect.gen(function*() {
    const rows: Array<A> = []
    let pageToken: string | undefined
    do {
      const page = yield* list({ ...options, pageSize: 200, pageToken })
      rows.push(...items(page))
      pageToken = page.nextPageToken
    } while (pageToken !== undefined && pageToken !== "" && (Option.isNone(limit) || rows.length < limit.value))
    return Option.isNone(limit) ? rows : rows.slice(0, limit.value)
  })

const uidPattern = /^[0-9a-f]{40}(\/[0-9a-f]{16})*$/

/** A group named by its uid, or by a path of names from its organization (`acme/platform/build`). */
export const resolveGroup = (client: Client, ref: string) =>
  Effect.gen(function*() {
    if (uidPattern.test(ref)) return ref
    let found: string | undefined
    for (const name of ref.split("/").filter((n) => n !== "")) {
      const page = yield* client.groups.list({
        urlParams: { name, ...(found === undefined ? { inRoot: true } : { childrenOf: found }) }
      })
      const group = page.groups[0]
      if (group === undefined) return yield* new Errors.NotFound({ resourceType: "group", uid: ref })
      found = group.uid
    }
    if (found === undefined) {
      return yield* new Errors.InvalidArgument({
        violations: [new Errors.FieldViolation({ field: "group", description: "is a uid or a path of names" })]
      })
    }
    Failure.rememberName(found, ref)
    return found
  })

/** A role by uid, or by name among the roles the caller sees. */
export const resolveRole = (client: Client, ref: string) =>
  uidPattern.test(ref)
    ? Effect.succeed(ref)
    : Effect.flatMap(client.roles.list({ urlParams: { name: ref } }), (page) =>
      page.roles.length === 1
        ? Effect.succeed(page.roles[0]!.uid)
        : Effect.fail(
          new Failure.UsageError({
            message: page.roles.length === 0 ? `no role named ${ref}` : `several roles are named ${ref}; give its uid`
          })
        ))

/** What a person typed for a resource of kind `refers` (a uid, a path of names, a role's name), as its uid. */
export const resolve = (client: Client, refers: ListQuery.Refers, ref: string) =>
  refers === "group" ? resolveGroup(client, ref) : refers === "role" ? resolveRole(client, ref) : Effect.succeed(ref)

/** An ISO time for a table cell. */
export const time = (t: { readonly epochMillis: number }) => new Date(t.epochMillis).toISOString()
