/**
 * The commands every kind of resource has, from one factory: `list` (every page the caller sees, filtered by a flag
 * for each filter its list's declared query takes), `describe` (one, in full) and `delete`. A resource is named by
 * its uid, or by whatever its `ref` resolves (a group's path of names, a role's name).
 */
import * as ListQuery from "@arbor/api/ListQuery"
import * as Names from "@arbor/api/Names"
import type { ListOptions } from "@arbor/core/Lists"
import { Args, Command, Options } from "@effect/cli"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { UsageError } from "../../Failure.js"
import type * as Output from "../../Output.js"
import {
  allPages,
  callerOf,
  type Client,
  common,
  confirm,
  connect,
  limit,
  output,
  print,
  printOne,
  printRows,
  resolve,
  yes
} from "../shared.js"

/** The argument that names one resource, and how it becomes a uid. */
export interface Ref<E> {
  readonly name: string
  readonly description: string
  readonly resolve: (client: Client, ref: string) => Effect.Effect<string, E>
}

/** A resource named by its uid. */
export const byUid = (singular: string): Ref<never> => ({
  name: "uid",
  description: `the ${singular}'s uid`,
  resolve: (_, uid) => Effect.succeed(uid)
})

/** How `list` reaches one kind of resource. */
export interface Listing<
  A extends { readonly uid: string },
  P,
  E,
  O extends ListOptions = ListOptions,
  QI = unknown
> {
  readonly shape: Output.Shape<A>
  /** The query its list takes, as the API declares it (`@arbor/api/Resources`): `list`'s flags come from it. */
  readonly query: Schema.Schema<O, QI>
  readonly list: (client: Client, options: O) => Effect.Effect<P, E>
  readonly items: (page: P) => ReadonlyArray<A>
  /** The order of `list` (by uid when absent). */
  readonly order?: string
  /** The group an item lies in, which a table names by its path (`IN acme/platform`); none at the root. */
  readonly placed?: (item: A) => string | null
}

/** `shape` with the path of the group each row lies in beside its first column (for tables), from `paths`. */
const withPlaces = <A>(
  shape: Output.Shape<A>,
  placed: (item: A) => string | null,
  paths: ReadonlyMap<string, string>
): Output.Shape<A> => {
  const [first, ...rest] = shape.columns
  const place: Output.Column<A> = {
    heading: "IN",
    value: (row) => {
      const group = placed(row)
      return group === null ? "" : paths.get(group) ?? group
    },
    whenSet: true
  }
  return { ...shape, columns: first === undefined ? [place] : [first, place, ...rest] }
}

/** How the commands reach one kind of resource. */
export interface Resource<
  A extends { readonly uid: string },
  P,
  E,
  R = never,
  O extends ListOptions = ListOptions,
  QI = unknown
> extends Listing<A, P, E, O, QI> {
  readonly get: (client: Client, uid: string) => Effect.Effect<A, E>
  readonly delete: (client: Client, uid: string) => Effect.Effect<void, E>
  readonly ref: Ref<R>
}

/** A resource's commands' view of it, its types inferred from the functions given. */
export const make = <A extends { readonly uid: string }, P, E, R, O extends ListOptions, QI>(
  resource: Resource<A, P, E, R, O, QI>
) => resource

/** Every page of `resource`'s list with `options`, in `resource.order`, up to `max` items. */
export const pages = <
  A extends { readonly uid: string },
  P extends { readonly nextPageToken?: string | undefined },
  E,
  O extends ListOptions,
  QI
>(
  resource: Listing<A, P, E, O, QI>,
  client: Client,
  options: O,
  max: Option.Option<number>
) =>
  allPages(
    (urlParams: O) => resource.list(client, urlParams),
    resource.items,
    { orderBy: resource.order, ...options },
    max
  )

/**
 * The flag of a list parameter: its name without `uidp.`, dashed (`--children-of`), but `--parent` for what lies below
 * a group, as where a command creates.
 */
export const flagName = (parameter: string) =>
  parameter === "uidp.descendants_of" ? "parent" : parameter.replace(/^uidp\./, "").replaceAll("_", "-")

/** How a person names what a parameter refers to. */
const naming: Record<ListQuery.Refers, string> = {
  group: "a uid or a path of names",
  role: "its uid or name",
  identity: "its uid, or its group's path and its name"
}

/** A list parameter's flag: what was given, as the parameter's text (or texts), or undefined. */
const flagOf = (parameter: ListQuery.Parameter): Options.Options<string | ReadonlyArray<string> | undefined> => {
  const name = flagName(parameter.name)
  const text = parameter.refers === undefined
    ? parameter.description
    : parameter.description.includes("its uid")
    ? parameter.description.replace("its uid", naming[parameter.refers])
    : `${parameter.description} (${naming[parameter.refers]})`
  // What the value is, in the usage line: `--parent <group>`, `--ids <uid>...`.
  const pseudo = parameter.refers ?? (parameter.name === "uidp.ids" ? "uid" : "text")
  switch (parameter.kind) {
    case "flag":
      return Options.boolean(name).pipe(
        Options.withDescription(text),
        Options.map((given) => (given ? "true" : undefined))
      )
    case "repeated":
      return Options.text(name).pipe(
        Options.withPseudoName(pseudo),
        Options.withDescription(text),
        Options.repeated,
        Options.map((values) => (values.length === 0 ? undefined : values))
      )
    default:
      return Options.text(name).pipe(
        Options.withPseudoName(pseudo),
        Options.withDescription(text),
        Options.optional,
        Options.map(Option.getOrUndefined)
      )
  }
}

/**
 * `list`: every page, in `resource.order`, of those `fixed` selects and the flags given select. Each filter of the
 * resource's declared query is a flag (paging excepted: the command reads every page, up to `--limit`), a name typed
 * for a group, an identity or a role is resolved to its uid, and the query's schema decodes the rest, as the server would.
 */
export const list = <
  A extends { readonly uid: string },
  P extends { readonly nextPageToken?: string | undefined },
  E,
  O extends ListOptions,
  QI
>(
  resource: Listing<A, P, E, O, QI>,
  description: string,
  { fixed = {}, flags = {} }: {
    /** Options every listing sets: no flag is offered for them. */
    readonly fixed?: Partial<O>
    /** A flag of the command's own for a parameter (by its wire name), in a person's words. */
    readonly flags?: Readonly<Record<string, Options.Options<string | ReadonlyArray<string> | undefined>>>
  } = {}
) => {
  const offered = ListQuery.parameters(resource.query).filter(({ key, name }) =>
    !ListQuery.pagingParameters.has(name) && !(key in fixed)
  )
  const filters = Options.all(
    Object.fromEntries(offered.map((parameter) => [parameter.name, flags[parameter.name] ?? flagOf(parameter)]))
  )
  const decode = Schema.decodeUnknown(resource.query)
  return Command.make("list", { ...common, output, limit, filters }, (given) =>
    Effect.gen(function*() {
      const client = yield* connect(given)
      const query: Record<string, string | ReadonlyArray<string>> = {}
      for (const parameter of offered) {
        const value = given.filters[parameter.name]
        if (value === undefined) continue
        query[parameter.name] = parameter.refers !== undefined && typeof value === "string"
          ? yield* resolve(client, parameter.refers, value)
          : value
      }
      const options = yield* decode(query).pipe(
        Effect.mapError((error) =>
          new UsageError({
            message: ParseResult.ArrayFormatter.formatErrorSync(error).map(({ message, path }) =>
              `--${flagName(String(path[0] ?? ""))}: ${message}`
            ).join("; ")
          })
        )
      )
      const rows = yield* pages(resource, client, { ...options, ...fixed }, given.limit)
      // A table names where each row lies: names alone repeat across folders (build, deploy).
      const placed = resource.placed
      const shape = placed !== undefined && (given.output === "table" || given.output === "wide")
        ? withPlaces(resource.shape, placed, yield* Names.paths(client, rows.flatMap((row) => placed(row) ?? [])))
        : resource.shape
      yield* printRows(rows, shape, given.output)
    })).pipe(Command.withDescription(description))
}

const refArg = <R>(ref: Ref<R>) => Args.text({ name: ref.name }).pipe(Args.withDescription(ref.description))

/** `describe <ref>`: one resource, every column. */
export const describe = <A extends { readonly uid: string }, P, E, R, O extends ListOptions, QI>(
  resource: Resource<A, P, E, R, O, QI>,
  description: string
) =>
  Command.make("describe", { ...common, output, ref: refArg(resource.ref) }, (flags) =>
    Effect.gen(function*() {
      const client = yield* connect(flags)
      const found = yield* resource.get(client, yield* resource.ref.resolve(client, flags.ref))
      yield* printOne(found, resource.shape, flags.output)
    })).pipe(Command.withDescription(description))

/**
 * `delete <ref> [--yes]`: on a terminal it asks first (`Delete acme/old?`, or `caution`'s question about the resource
 * found, for the identity the caller acts as: deleting one's own owner binding); without one it goes ahead, but for a
 * `caution`, which needs `--yes`. It says what it deleted.
 */
export const remove = <A extends { readonly uid: string }, P, E, R, O extends ListOptions, QI>(
  resource: Resource<A, P, E, R, O, QI>,
  description: string,
  caution: (found: A, caller: string) => string | undefined = () => undefined
) =>
  Command.make("delete", { ...common, ref: refArg(resource.ref), yes }, (flags) =>
    Effect.gen(function*() {
      const client = yield* connect(flags)
      const uid = yield* resource.ref.resolve(client, flags.ref)
      const question = caution(yield* resource.get(client, uid), yield* callerOf(flags))
      if (question !== undefined) yield* confirm(question, "delete it", flags.yes)
      else if (!flags.yes && process.stdin.isTTY === true) yield* confirm(`Delete ${flags.ref}?`, "delete it", false)
      yield* resource.delete(client, uid)
      yield* print(`Deleted ${flags.ref}${flags.ref === uid ? "" : ` (${uid})`}`)
    })).pipe(Command.withDescription(description))
