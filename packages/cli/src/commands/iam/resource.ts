/**
 * The commands every kind of resource has, from one factory: `list` (every page the caller sees, below `--parent`
 * when given), `describe` (one, in full) and `delete`. A resource is named by its uid, or by whatever its `ref`
 * resolves (a group's path of names, a role's name).
 */
import type { ListOptions } from "@arbor/core/Lists"
import { Args, Command, Options } from "@effect/cli"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Output from "../../Output.js"
import { allPages, type Client, common, connect, limit, output, parent, printRows, resolveGroup } from "../shared.js"

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

/** How the commands reach one kind of resource. */
export interface Resource<A extends { readonly uid: string }, P, E, R = never, O extends ListOptions = ListOptions> {
  readonly shape: Output.Shape<A>
  readonly list: (client: Client, options: O) => Effect.Effect<P, E>
  readonly items: (page: P) => ReadonlyArray<A>
  /** The order of `list` (by uid when absent). */
  readonly order?: string
  readonly get: (client: Client, uid: string) => Effect.Effect<A, E>
  readonly delete: (client: Client, uid: string) => Effect.Effect<void, E>
  readonly ref: Ref<R>
}

/** A resource's commands' view of it, its types inferred from the functions given. */
export const make = <A extends { readonly uid: string }, P, E, R = never, O extends ListOptions = ListOptions>(
  resource: Resource<A, P, E, R, O>
) => resource

/** `--parent` of `list`: only what lies below that group. */
export const below = parent.pipe(
  Options.withDescription("only those below this group (a uid or a path of names)"),
  Options.optional
)

/** Every page of `resource`'s list with `options`, in `resource.order`, up to `max` items. */
export const pages = <
  A extends { readonly uid: string },
  P extends { readonly nextPageToken?: string | undefined },
  E,
  R,
  O extends ListOptions
>(
  resource: Resource<A, P, E, R, O>,
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
 * `list`: every page, in `resource.order`, of those `filter` selects (all the caller sees when absent) and, unless
 * `filter` is given, below `--parent`.
 */
export const list = <
  A extends { readonly uid: string },
  P extends { readonly nextPageToken?: string | undefined },
  E,
  R
>(
  resource: Resource<A, P, E, R>,
  description: string,
  filter?: ListOptions
) => {
  const run = (client: Client, options: ListOptions, max: Option.Option<number>) =>
    pages(resource, client, options, max)
  return filter === undefined
    ? Command.make("list", { ...common, output, limit, parent: below }, (flags) =>
      Effect.gen(function*() {
        const client = yield* connect(flags)
        const scope: ListOptions = Option.isSome(flags.parent)
          ? { descendantsOf: yield* resolveGroup(client, flags.parent.value) }
          : {}
        yield* printRows(yield* run(client, scope, flags.limit), resource.shape, flags.output)
      })).pipe(Command.withDescription(description))
    : Command.make("list", { ...common, output, limit }, (flags) =>
      Effect.gen(function*() {
        const client = yield* connect(flags)
        yield* printRows(yield* run(client, filter, flags.limit), resource.shape, flags.output)
      })).pipe(Command.withDescription(description))
}

const refArg = <R>(ref: Ref<R>) => Args.text({ name: ref.name }).pipe(Args.withDescription(ref.description))

/** `describe <ref>`: one resource, every column. */
export const describe = <A extends { readonly uid: string }, P, E, R>(
  resource: Resource<A, P, E, R>,
  description: string
) =>
  Command.make("describe", { ...common, output, ref: refArg(resource.ref) }, (flags) =>
    Effect.gen(function*() {
      const client = yield* connect(flags)
      const found = yield* resource.get(client, yield* resource.ref.resolve(client, flags.ref))
      yield* printRows([found], resource.shape, flags.output === "table" ? "wide" : flags.output)
    })).pipe(Command.withDescription(description))

/** `delete <ref>`. */
export const remove = <A extends { readonly uid: string }, P, E, R>(
  resource: Resource<A, P, E, R>,
  description: string
) =>
  Command.make("delete", { ...common, ref: refArg(resource.ref) }, (flags) =>
    Effect.gen(function*() {
      const client = yield* connect(flags)
      yield* resource.delete(client, yield* resource.ref.resolve(client, flags.ref))
    })).pipe(Command.withDescription(description))
