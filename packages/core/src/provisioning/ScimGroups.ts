/**
 * The ScimGroups service (docs/api.md §13): the groups an identity provider's SCIM client pushes (RFC 7644's create,
 * get, list, replace, patch and delete, as the edge reads them), whose members hold the roles of the provider's group
 * mappings of them (`Authorization`). The client is one `ScimCredentials` authenticated.
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Errors from "../engine/Errors.js"
import { commit, conflict, operations, trusted } from "../engine/internal/operations.js"
import { operation } from "../engine/internal/tracing.js"
import * as Repository from "../engine/Repository.js"
import type { Condition } from "../engine/Store.js"
import type { StoreError } from "../engine/Store.js"
import * as Uid from "../engine/Uid.js"
import * as Validation from "../engine/Validation.js"
import * as ChangeLog from "../events/ChangeLog.js"
import * as Principal from "../iam/Principal.js"
import { live } from "./internal/owners.js"
import type { Client } from "./ScimCredentials.js"
import * as ScimGroup from "./ScimGroup.js"
import * as ScimUser from "./ScimUser.js"
import type { Page } from "./ScimUsers.js"
import { maxPageSize } from "./ScimUsers.js"

/** The one filter a list takes: equality on `displayName` (case-insensitive) or `externalId`. */
export interface Filter {
  readonly attribute: "displayName" | "externalId"
  readonly value: string
}

/** Builds the ScimGroups service from the services in its context; `Arbor.layer` builds it with the others. */
export const make = Effect.gen(function*() {
  const ops = yield* operations
  const groups = yield* Repository.make(ScimGroup.table, ScimGroup.Record)
  const users = yield* Repository.make(ScimUser.table, ScimUser.Record)

  const groupOf = ({ displayNameKey: _, ...group }: ScimGroup.Record) => new ScimGroup.ScimGroup(group, trusted)

  /** The group `id` of the client's provider, as stored. */
  const stored = (client: Client, id: string, ifMatch?: ReadonlyArray<number>) =>
    Effect.gen(function*() {
      const uid = ScimGroup.uidOf(client.provider.uid, id)
      const record = uid === undefined ? undefined : Option.getOrUndefined(yield* groups.get(uid))
      if (record === undefined) return yield* new Errors.NotFound({ resourceType: "Group", uid: id })
      if (ifMatch !== undefined && !ifMatch.includes(record.version)) {
        return yield* new Errors.Aborted({
          description: `the group changed since version ${
            ifMatch.join(", ")
          }: it is at ${record.version}; read it again`,
          reason: "ETAG_MISMATCH"
        })
      }
      return record
    })

  /**
   * A group as a client wrote it: checked, each member once, and every member one of the provider's users (a client
   * cannot give its mapped roles to anyone its provider did not provision).
   */
  const written = (client: Client, input: unknown) =>
    Effect.gen(function*() {
      const group = yield* Validation.decode(ScimGroup.WriteScimGroup)(input)
      const members = [...new Set(group.members.map((member) => member.value))]
      const known = new Set<string>()
      for (let at = 0; at < members.length; at += 500) {
        const chunk = members.slice(at, at + 500).filter(Uid.isUid)
        const found = chunk.length === 0 ? [] : yield* users.find({
          conditions: [...live(client.provider.uid), { _tag: "In", column: "identityUid", values: chunk }],
          order: [{ column: "uid", direction: "asc" }]
        })
        for (const user of found) known.add(user.identityUid)
      }
      const unknown = members.findIndex((member) => !known.has(member))
      if (unknown >= 0) {
        return yield* Errors.InvalidArgument.field(
          "members",
          `${members[unknown]} is not a user of this identity provider: provision the user first`
        )
      }
      return {
        displayName: group.displayName,
        externalId: group.externalId ?? null,
        members: members as Array<Uid.Uid>
      }
    })

  type Written = Effect.Effect.Success<ReturnType<typeof written>>

  const taken = conflict("Group", "a group with that displayName exists")

  /** Writes `next` over `record` (or a new group when there is none), its version and update time advanced. */
  const save = (record: ScimGroup.Record | undefined, next: Written, provider: Uid.Uid) =>
    Effect.gen(function*() {
      const now = yield* DateTime.now
      const group: ScimGroup.Record = {
        uid: record?.uid ?? Uid.makeChild(provider),
        displayName: next.displayName,
        displayNameKey: ScimGroup.displayNameKeyOf(next.displayName),
        externalId: next.externalId,
        members: next.members,
        version: (record?.version ?? 0) + 1,
        createTime: record?.createTime ?? now,
        updateTime: now
      }
      if (record === undefined) yield* groups.insert(group).pipe(taken)
      else yield* groups.update(group).pipe(taken)
      return groupOf(group)
    })

  /** Runs `body` as one transaction, its writes attributed to the client: `scim:<provider uid>`. */
  const asClient = <A, E, R>(client: Client, body: Effect.Effect<A, E, R>) =>
    commit(ops, Principal.system, ChangeLog.actingAs({ subject: `scim:${client.provider.uid}` })(body))

  const service: ScimGroupsService = {
    createGroup: (client: Client, input: unknown) =>
      operation("ScimGroups.createGroup")(
        asClient(client, Effect.flatMap(written(client, input), (group) => save(undefined, group, client.provider.uid)))
      ),

    getGroup: (client: Client, id: string) => operation("ScimGroups.getGroup")(Effect.map(stored(client, id), groupOf)),

    listGroups: (client: Client, filter: Filter | undefined, page: Page) =>
      operation("ScimGroups.listGroups")(Effect.gen(function*() {
        const conditions: ReadonlyArray<Condition> = [
          { _tag: "Equals", column: "parent", value: client.provider.uid },
          ...(filter === undefined ? [] : [{
            _tag: "Equals" as const,
            column: filter.attribute === "displayName" ? "displayNameKey" : "externalId",
            value: filter.attribute === "displayName" ? ScimGroup.displayNameKeyOf(filter.value) : filter.value
          }])
        ]
        const total = yield* groups.count({ conditions })
        const found = page.count === 0 ? [] : yield* groups.find({
          conditions,
          order: [{ column: "createTime", direction: "asc" }, { column: "uid", direction: "asc" }],
          offset: Math.max(0, page.startIndex - 1),
          limit: Math.min(page.count, maxPageSize)
        })
        return { total, groups: found.map(groupOf) }
      })),

    replaceGroup: (client: Client, id: string, input: unknown, ifMatch?: ReadonlyArray<number>) =>
      operation("ScimGroups.replaceGroup")(asClient(
        client,
        Effect.gen(function*() {
          const record = yield* stored(client, id, ifMatch)
          return yield* save(record, yield* written(client, input), client.provider.uid)
        })
      )),

    patchGroup: <E>(
      client: Client,
      id: string,
      apply: (group: ScimGroup.ScimGroup) => Effect.Effect<unknown, E>,
      ifMatch?: ReadonlyArray<number>
    ) =>
      operation("ScimGroups.patchGroup")(asClient(
        client,
        Effect.gen(function*() {
          const record = yield* stored(client, id, ifMatch)
          const next = yield* written(client, yield* apply(groupOf(record)))
          return yield* save(record, next, client.provider.uid)
        })
      )),

    deleteGroup: (client: Client, id: string, ifMatch?: ReadonlyArray<number>) =>
      operation("ScimGroups.deleteGroup")(
        asClient(
          client,
          Effect.flatMap(stored(client, id, ifMatch), (record) => groups.delete({ ranges: [Uid.only(record.uid)] }))
        ).pipe(Effect.asVoid)
      )
  }
  return service
})

/** The ScimGroups service: the groups a provider's SCIM client pushes, whose members hold their mapped roles. */
export interface ScimGroupsService {
  /** Pushes a group; a `displayName` another group has is ALREADY_EXISTS. */
  readonly createGroup: (client: Client, input: unknown) => Effect.Effect<ScimGroup.ScimGroup, Errors.WriteFailure>
  readonly getGroup: (
    client: Client,
    id: string
  ) => Effect.Effect<ScimGroup.ScimGroup, Errors.ReadFailure | Errors.Aborted>
  /** The provider's groups, oldest first, those the filter names only; with how many match in all. */
  readonly listGroups: (
    client: Client,
    filter: Filter | undefined,
    page: Page
  ) => Effect.Effect<
    { readonly total: number; readonly groups: ReadonlyArray<ScimGroup.ScimGroup> },
    Errors.StoreFailure
  >
  /** Replaces a group (RFC 7644 §3.5.1); with `ifMatch`, only one at one of those versions (else `ETAG_MISMATCH`). */
  readonly replaceGroup: (
    client: Client,
    id: string,
    input: unknown,
    ifMatch?: ReadonlyArray<number>
  ) => Effect.Effect<ScimGroup.ScimGroup, Errors.WriteFailure>
  /**
   * Changes a group by `apply`, which the edge makes of a PATCH request (RFC 7644 §3.5.2: Entra's and Okta's
   * `members` adds and removes): it is given the group as stored, and what it returns is checked as a replacement is.
   */
  readonly patchGroup: <E>(
    client: Client,
    id: string,
    apply: (group: ScimGroup.ScimGroup) => Effect.Effect<unknown, E>,
    ifMatch?: ReadonlyArray<number>
  ) => Effect.Effect<ScimGroup.ScimGroup, Errors.WriteFailure | Exclude<E, StoreError>>
  /** Deletes a group: its members hold its mapped roles no longer. */
  readonly deleteGroup: (
    client: Client,
    id: string,
    ifMatch?: ReadonlyArray<number>
  ) => Effect.Effect<void, Errors.WriteFailure>
}

/** SCIM groups. */
export class ScimGroups extends Effect.Service<ScimGroups>()("@arbor/core/ScimGroups", { effect: make }) {}
