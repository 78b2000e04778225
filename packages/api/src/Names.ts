/**
 * How a person names a group, an identity or a role, both ways, for every surface a person uses (the command-line
 * client, the console). Typed, a resource is its uid or a path of names: a group `acme/platform`, an identity
 * `acme/platform/deployer` (its group's path, then its name; a person alone by their name), a role `editor` (a
 * built-in role, or a custom role whose name is unique among those the caller sees) or `acme/deployer` (a custom role
 * of a group). Read, a uid is shown as the same path, as far as the caller may read it, else as the uid.
 */
import * as Errors from "@arbor/core/Errors"
import * as Uid from "@arbor/core/Uid"
import * as Effect from "effect/Effect"
import type { Client } from "./Client.js"
import type { Refers } from "./ListQuery.js"

/** True when `ref` is a uid rather than a name. */
export const isUid = (ref: string): boolean => Uid.isUid(ref)

const segments = (ref: string) => ref.split("/").filter((name) => name !== "")

const notFound = (resourceType: string, ref: string) => new Errors.NotFound({ resourceType, uid: ref })

const unnamed = (field: string, description: string) =>
  new Errors.InvalidArgument({ violations: [new Errors.FieldViolation({ field, description })] })

/** The uid of the group `names` (a path from its organization) lead to. */
const groupAlong = (client: Client, names: ReadonlyArray<string>, ref: string) =>
  Effect.gen(function*() {
    let found: string | undefined
    for (const name of names) {
      const page = yield* client.groups.list({
        urlParams: { name, ...(found === undefined ? { inRoot: true } : { childrenOf: found }) }
      })
      const group = page.groups[0]
      if (group === undefined) return yield* notFound("group", ref)
      found = group.uid
    }
    return found
  })

/** A group named by its uid, or by a path of names from its organization (`acme/platform/build`). */
export const group = (client: Client, ref: string) =>
  Effect.gen(function*() {
    if (isUid(ref)) return ref
    const found = yield* groupAlong(client, segments(ref), ref)
    if (found === undefined) return yield* unnamed("group", "is a uid or a path of names (acme/platform)")
    return found
  })

/** An identity named by its uid, by its group's path and its name (`acme/platform/deployer`), or a person's name. */
export const identity = (client: Client, ref: string) =>
  Effect.gen(function*() {
    if (isUid(ref)) return ref
    const names = segments(ref)
    const name = names.at(-1)
    if (name === undefined) {
      return yield* unnamed("identity", "is a uid or its group's path and its name (acme/platform/deployer)")
    }
    const parent = yield* groupAlong(client, names.slice(0, -1), ref)
    const page = yield* client.identities.list({
      urlParams: { name, ...(parent === undefined ? { inRoot: true } : { childrenOf: parent }) }
    })
    const found = page.identities[0]
    if (found === undefined) return yield* notFound("identity", ref)
    return found.uid
  })

/** A role named by its uid, by its name among the roles the caller sees, or by its group's path and its name. */
export const role = (client: Client, ref: string) =>
  Effect.gen(function*() {
    if (isUid(ref)) return ref
    const names = segments(ref)
    const name = names.at(-1)
    if (name === undefined) return yield* unnamed("role", "is a uid, a role's name, or its group's path and its name")
    const parent = names.length > 1 ? yield* groupAlong(client, names.slice(0, -1), ref) : undefined
    const page = yield* client.roles.list({
      urlParams: { name, ...(parent === undefined ? {} : { childrenOf: parent }) }
    })
    const [found, ...others] = page.roles
    if (found === undefined) return yield* notFound("role", ref)
    if (others.length > 0) {
      return yield* unnamed("role", `several roles are named ${name}: give its uid, or its group's path (acme/${name})`)
    }
    return found.uid
  })

/** What a person typed for a resource of kind `refers`, as its uid. */
export const resolve = (client: Client, refers: Refers, ref: string) =>
  refers === "group" ? group(client, ref) : refers === "role" ? role(client, ref) : identity(client, ref)

/**
 * Names for uids, as the caller may read them, each looked up once: a group as its path (`acme/platform`), an
 * identity as its group's path and its name, a role as its name. A uid the caller may not read stays a uid.
 */
export const reader = (client: Client) =>
  Effect.gen(function*() {
    /**
     * The name a group had when the audit trail last recorded it (its deletion, for one deleted since), as far as the
     * caller may read the trail where it lived: history keeps its name (DECISIONS §20).
     */
    const recordedName = (uid: string) =>
      client.auditTrail.list({ urlParams: { subject: uid, orderBy: "time desc", pageSize: 1 } }).pipe(
        Effect.map((page) => page.events[0] === undefined ? undefined : named(page.events[0].body)),
        Effect.orElseSucceed(() => undefined)
      )
    const groupPath: (uid: string) => Effect.Effect<string> = yield* Effect.cachedFunction((uid: string) =>
      Effect.all([
        client.groups.get({ path: { uid } }),
        client.groups.list({ urlParams: { ancestorsOf: uid, pageSize: 100 } })
      ], { concurrency: 2 }).pipe(
        Effect.map(([group, above]) => {
          const path = [...above.groups, group].sort((a, b) => a.uid.length - b.uid.length)
          // The whole path, from the organization down, or the uid.
          return path.every((g, i) => Uid.depth(g.uid) === i) ? path.map((g) => g.name).join("/") : uid
        }),
        // Gone (or never readable): its path as the trail recorded it, else its uid.
        Effect.orElse(() =>
          Effect.flatMap(recordedName(uid), (name) => {
            const parent = Uid.isUid(uid) ? Uid.parentOrNull(uid as Uid.Uid) : null
            if (name === undefined) return Effect.succeed(uid)
            if (parent === null) return Effect.succeed(name)
            return Effect.map(groupPath(parent), (above) => above === parent ? uid : `${above}/${name}`)
          })
        )
      )
    )
    const roleName = yield* Effect.cachedFunction((uid: string) =>
      client.roles.get({ path: { uid } }).pipe(Effect.map((r) => r.name), Effect.orElseSucceed(() => uid))
    )
    const identityName = yield* Effect.cachedFunction((uid: string) =>
      client.identities.get({ path: { uid } }).pipe(
        Effect.flatMap((found) => {
          const parent = Uid.parentOrNull(found.uid)
          return parent === null
            ? Effect.succeed(found.name)
            : Effect.map(groupPath(parent), (path) => path === parent ? found.name : `${path}/${found.name}`)
        }),
        Effect.orElseSucceed(() => uid)
      )
    )
    return { group: groupPath, role: roleName, identity: identityName }
  })

const named = (value: unknown): string | undefined =>
  typeof value === "object" && value !== null && "name" in value && typeof value.name === "string" && value.name !== ""
    ? value.name
    : undefined

/** The other resources a log names by one field of their own: what a person recognises them by. */
const calledBy = [
  ["userName", ""], // a SCIM user
  ["externalGroupId", "external group "], // a group mapping
  ["docId", "terms "] // a terms acceptance
] as const

/**
 * What a person calls the resource of a change-log entry, from its body as the reader may see it: its name; for a
 * role binding `identity → role`; for an invite `invite for ada@acme.example → viewer` (without the email when it
 * names none); a SCIM user's userName, a mapping's external group, a terms acceptance's document. Undefined when the
 * body names nothing the reader may see (the reader then sees the uid).
 */
export const ofEntry = (entry: { readonly body: Readonly<Record<string, unknown>> }): string | undefined => {
  const body = entry.body
  const own = named(body)
  if (own !== undefined) return own
  const [identity, role] = [named(body.identity), named(body.role)]
  if (role !== undefined) {
    if (identity !== undefined) return `${identity} → ${role}`
    return typeof body.email === "string" && body.email !== ""
      ? `invite for ${body.email} → ${role}`
      : `invite → ${role}`
  }
  const [, label, value] = calledBy.map(([key, label]) => [key, label, body[key]] as const)
    .find(([, , value]) => typeof value === "string" && value !== "") ?? []
  return value === undefined ? undefined : `${label}${String(value)}`
}
