/**
 * What the commands share: the options every command takes (`--api`, `--issuer`), `-o` and `--limit`, the typed
 * API client with a valid token, reading every page of a list, and naming a group, an identity or a role by uid or
 * path of names (`@arbor/api`'s `Names`, which the console uses too).
 */
import * as ApiClient from "@arbor/api/Client"
import type * as ListQuery from "@arbor/api/ListQuery"
import * as Names from "@arbor/api/Names"
import type { ListOptions } from "@arbor/core/Lists"
import { Args, Options } from "@effect/cli"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { createInterface } from "node:readline/promises"
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

/** The terminal's width when printing to one; undefined into a pipe or a file, where every cell is printed whole. */
const terminalWidth = () => process.stdout.isTTY ? process.stdout.columns : undefined

/** Prints rows in the chosen format, a table within the terminal's width. */
export const printRows = <A extends { readonly uid: string } | { readonly id: string }>(
  rows: ReadonlyArray<A>,
  shape: Output.Shape<A>,
  format: Output.Format
) => print(Output.render(rows, shape, format, terminalWidth()))

/** The API's typed client, with a valid token. */
export const apiClient = (where: Where.Endpoints) =>
  Effect.flatMap(Auth.token(where), (token) => ApiClient.make({ baseUrl: where.api, token }))

/** The typed client. */
export type Client = ApiClient.Client

/** The client, for the addresses the flags name. */
export const connect = (flags: Parameters<typeof Where.endpoints>[0]) =>
  Effect.flatMap(Where.endpoints(flags), apiClient)

/** The identity the flags' token acts as (its `sub`), as the token says, unverified: for questions, never for access. */
export const callerOf = (flags: Parameters<typeof Where.endpoints>[0]) =>
  Effect.map(Effect.flatMap(Where.endpoints(flags), Auth.token), (token) => String(Auth.claimsOf(token).sub ?? ""))

/** `--yes`: do what would otherwise be asked first. */
export const yes = Options.boolean("yes").pipe(Options.withDescription("go ahead without asking (for scripts and CI)"))

/**
 * Asks `question` on the terminal before something hard to undo (`doing` names it: "apply"), unless `--yes` was
 * given; without a terminal to ask in, `--yes` is required. Anything but yes stops the command, nothing done.
 */
export const confirm = (question: string, doing: string, given: boolean) =>
  Effect.gen(function*() {
    if (given) return
    if (process.stdin.isTTY !== true) {
      return yield* new Failure.UsageError({ message: `give --yes to ${doing} without a terminal to ask in` })
    }
    const answer = yield* Effect.promise(async () => {
      const terminal = createInterface({ input: process.stdin, output: process.stderr })
      try {
        return await terminal.question(`${question} [y/N] `)
      } finally {
        terminal.close()
      }
    })
    if (!/^y(es)?$/i.test(answer.trim())) return yield* new Failure.CommandFailed({ message: `nothing done` })
  })

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

/** `resolved`, remembering what the person typed for it, so that messages can say it back. */
const remembered = (ref: string) => (resolved: string) => Effect.sync(() => Failure.rememberName(resolved, ref))

/** A group named by its uid, or by a path of names from its organization (`acme/platform/build`). */
export const resolveGroup = (client: Client, ref: string) => Effect.tap(Names.group(client, ref), remembered(ref))

/** A role by uid, by name among the roles the caller sees, or by its group's path and its name. */
export const resolveRole = (client: Client, ref: string) => Effect.tap(Names.role(client, ref), remembered(ref))

/** An identity by uid, or by its group's path and its name (`acme/platform/deployer`). */
export const resolveIdentity = (client: Client, ref: string) => Effect.tap(Names.identity(client, ref), remembered(ref))

/** What a person typed for a resource of kind `refers` (a uid, a path of names, a role's name), as its uid. */
export const resolve = (client: Client, refers: ListQuery.Refers, ref: string) =>
  Effect.tap(Names.resolve(client, refers, ref), remembered(ref))

/** Prints one resource as `describe` shows it: a line per column, every value whole; its JSON an object. */
export const printOne = <A extends { readonly uid: string } | { readonly id: string }>(
  row: A,
  shape: Output.Shape<A>,
  format: Output.Format
) =>
  print(
    format === "json"
      ? Output.renderObject(row, shape)
      : Output.render([row], shape, format === "table" ? "wide" : format)
  )

/** An ISO time for a table cell. */
export const time = (t: { readonly epochMillis: number }) => new Date(t.epochMillis).toISOString()
