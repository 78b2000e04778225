/**
 * How a person names a group, an identity or a role, both ways, for every surface a person uses (the command-line
 * client, the console). Typed, a resource is its uid or a path of names: a group `acme/platform`, an identity
 * `acme/platform/deployer` (its group's path, then its name; a person alone by their name), a role `editor` (a
 * built-in role, or a custom role whose name is unique among those the caller sees) or `acme/deployer` (a custom role
 * of a group). Read, a uid is shown as the same path, as far as the caller may read it, else as the uid.
 */
import type * as ChangeLog from "@arbor/core/ChangeLog"
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
 * The path of names of group `uid` from `names` (each group the caller may read, by uid): the whole path from the
 * organization down; else its end the caller may read (`…/platform`, for one invited to a folder of an organization
 * it cannot read); its uid when it may read none of it.
 */
const pathIn = (names: ReadonlyMap<string, string>, uid: string): string => {
  const found: Array<string> = []
  for (let at: string | null = uid; at !== null; at = Uid.parentOrNull(at as Uid.Uid)) {
    const name = names.get(at)
    if (name === undefined) return found.length === 0 ? uid : `…/${found.join("/")}`
    found.unshift(name)
  }
  return found.join("/")
}

/**
 * Names for uids, as the caller may read them, each looked up once: a group as its path (`acme/platform`), an
 * identity as its group's path and its name, a role as its name. A uid the caller may not read stays a uid; of a path
 * whose upper groups it may not read, the end it may (`…/platform`).
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
        Effect.map(([group, above]) =>
          pathIn(new Map([...above.groups, group].map((g) => [g.uid as string, g.name])), group.uid)
        ),
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

/** What each kind of resource is called in an audit trail a person reads. */
const kindWords: Readonly<Record<ChangeLog.ResourceKind, string>> = {
  group: "folder",
  identity: "identity",
  role: "role",
  role_binding: "role binding",
  identity_provider: "identity provider",
  account_association: "account association",
  group_invite: "invite",
  repo: "repo",
  tag: "tag",
  advisory: "advisory",
  subscription: "subscription",
  terms_acceptance: "terms acceptance",
  identity_metadata: "identity metadata",
  repo_readme: "repo readme",
  group_access_request: "access request",
  external_group_role_mapping: "group mapping",
  scim_credential: "SCIM credential",
  scim_user: "SCIM user",
  scim_group: "SCIM group",
  decision_vocabulary: "decision vocabulary",
  eligibility: "eligibility",
  elevation: "elevation"
}

/**
 * Every kind of resource the audit trail records, with what a person calls it: for a filter's choices, in the order
 * of their words in lower case (English words without accents, so a dictionary's): `localeCompare` would load the
 * locale's collation when the module loads, about 10 ms of every call of `arbor`.
 */
export const kindsInWords: ReadonlyArray<readonly [ChangeLog.ResourceKind, string]> = Object.entries(kindWords)
  .map(([kind, words]) => [kind as ChangeLog.ResourceKind, words, words.toLowerCase()] as const)
  .sort((a, b) => a[2] < b[2] ? -1 : a[2] > b[2] ? 1 : 0)
  .map(([kind, words]) => [kind, words] as const)

/**
 * What an audit trail entry says happened, in one wording for every surface (the console, `arbor events list`): its
 * kind as a person calls it and what happened to it, from its CloudEvent type (`…iam.rolebindings.created.v1` is
 * "role binding created", made by a batch too; an organization's group "organization created").
 */
export const ofChange = (entry: {
  readonly kind: ChangeLog.ResourceKind
  readonly type: string
  readonly subject: string
}): string => {
  const kind = entry.kind === "group" && Uid.isUid(entry.subject) && Uid.parentOrNull(entry.subject) === null
    ? "organization"
    : kindWords[entry.kind] ?? entry.kind
  const words = entry.type.replace(/\.v\d+$/, "").split(".")
  const batch = words.at(-1) === "batch"
  const happened = (batch ? words.at(-2) : words.at(-1)) ?? ""
  // `access_requested`: the verb alone, the kind already names what.
  return `${kind} ${happened.split("_").at(-1)}`
}

/** One field an update changed: its value before and after (as the entry's bodies hold them, secrets never). */
export interface ChangedField {
  readonly field: string
  readonly before: unknown
  readonly after: unknown
}

/** Fields no person asks about of an update: when it was, which every update changes. */
const unremarkable = new Set(["updateTime", "update_time", "updatedAt"])

/**
 * What an update changed (an entry with `before`), field by field in the body's order; none for other entries. A
 * field whose value is an object or a list compares by its JSON.
 */
export const changedFields = (entry: {
  readonly body: Readonly<Record<string, unknown>>
  readonly before?: Readonly<Record<string, unknown>> | undefined
}): ReadonlyArray<ChangedField> => {
  const before = entry.before
  if (before === undefined) return []
  const fields = [...new Set([...Object.keys(entry.body), ...Object.keys(before)])]
  return fields
    .filter((field) => !unremarkable.has(field))
    .filter((field) => JSON.stringify(before[field]) !== JSON.stringify(entry.body[field]))
    .map((field) => ({ field, before: before[field], after: entry.body[field] }))
}

/** A value of a changed field as a person reads it: a list's items joined, text as it is, anything else as JSON. */
const shown = (value: unknown): string =>
  value === undefined || value === null
    ? "(none)"
    : typeof value === "string"
    ? value === "" ? "\"\"" : value
    : Array.isArray(value) && value.every((item) => typeof item === "string")
    ? `[${value.join(", ")}]`
    : JSON.stringify(value)

/** What an update changed, in one line: `capabilities: [repo.list] → [repo.list, repo.delete]; name: a → b`. */
export const ofChangedFields = (fields: ReadonlyArray<ChangedField>): string =>
  fields.map((f) => `${f.field}: ${shown(f.before)} → ${shown(f.after)}`).join("; ")

/**
 * The paths of names of groups `uids` (`acme/platform`), each as far as the caller may read it (`…/platform`), their
 * uid where it may read none of it: for a list's rows, with one request per hundred groups named (a group and those
 * above it), not two per row as `reader`'s.
 */
export const paths = (client: Client, uids: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const wanted = [
      ...new Set(uids.filter(Uid.isUid).flatMap((uid) => [...Uid.ancestors(uid as Uid.Uid), uid]))
    ]
    const names = new Map<string, string>()
    for (let i = 0; i < wanted.length; i += 100) {
      const page = yield* client.groups.list({ urlParams: { ids: wanted.slice(i, i + 100), pageSize: 100 } })
      for (const group of page.groups) names.set(group.uid, group.name)
    }
    return new Map(uids.map((uid) => [uid, pathIn(names, uid)] as const))
  })
