/**
 * The ScimUsers service (docs/api.md §13): the users an identity provider's SCIM client provisions (RFC 7644's
 * create, get, list, replace, patch and delete, as the edge reads them), which decide whether a person may still
 * sign in through it (`refuses`). The client is one `ScimCredentials` authenticated.
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Errors from "../engine/Errors.js"
import { commit, conflict, operations, trusted, unexpectedConflict } from "../engine/internal/operations.js"
import { operation } from "../engine/internal/tracing.js"
import * as Repository from "../engine/Repository.js"
import type { Condition } from "../engine/Store.js"
import type { StoreError } from "../engine/Store.js"
import * as Uid from "../engine/Uid.js"
import * as Validation from "../engine/Validation.js"
import * as ChangeLog from "../events/ChangeLog.js"
import * as Principal from "../iam/Principal.js"
import { People } from "../tokens/internal/signIn/people.js"
import { live } from "./internal/owners.js"
import type { Client } from "./ScimCredentials.js"
import * as ScimUser from "./ScimUser.js"

/** The one filter a list takes: equality on `userName` (case-insensitive) or `externalId`. */
export interface Filter {
  readonly attribute: "userName" | "externalId"
  readonly value: string
}

/** A page of users: RFC 7644 §3.4.2's `startIndex` (from 1) and `count`. */
export interface Page {
  readonly startIndex: number
  readonly count: number
}

/** The most users a page holds. */
export const maxPageSize = 200

/** Builds the ScimUsers service from the services in its context; `Arbor.layer` builds it with the others. */
export const make = Effect.gen(function*() {
  const ops = yield* operations
  const people = yield* People
  const users = yield* Repository.make(ScimUser.table, ScimUser.Record)

  const userOf = ({ deleted: _, userNameKey: _k, ...user }: ScimUser.Record) => new ScimUser.ScimUser(user, trusted)

  /** The user `id` (its person's uid) of the client's provider, as stored; NotFound for one deleted. */
  const stored = (client: Client, id: string, ifMatch?: ReadonlyArray<number>) =>
    Effect.gen(function*() {
      const found = Uid.isUid(id)
        ? yield* users.find({
          conditions: [...live(client.provider.uid), { _tag: "Equals", column: "identityUid", value: id }],
          order: [{ column: "uid", direction: "asc" }],
          limit: 1
        })
        : []
      const record = found[0]
      if (record === undefined) return yield* new Errors.NotFound({ resourceType: "User", uid: id })
      if (ifMatch !== undefined && !ifMatch.includes(record.version)) {
        return yield* new Errors.Aborted({
          description: `the user changed since version ${
            ifMatch.join(", ")
          }: it is at ${record.version}; read it again`,
          reason: "ETAG_MISMATCH"
        })
      }
      return record
    })

  /** A user as a client wrote it: checked, its attributes without those the server sets. */
  const written = (input: unknown) =>
    Effect.map(Validation.decode(ScimUser.WriteScimUser)(ScimUser.withoutPasswords(input)), (user) => {
      const { active, externalId, userName, ...rest } = user
      const attributes = Object.fromEntries(Object.entries(rest).filter(([key]) => !ScimUser.isIgnored(key)))
      return { active, externalId, userName, attributes, email: ScimUser.emailOf(user) }
    })

  type Written = Effect.Effect.Success<ReturnType<typeof written>>

  const taken = conflict("User", "a user with that userName or externalId exists")

  /** Writes `next` over `record` (or a new user when there is none), its version and update time advanced. */
  const save = (record: ScimUser.Record | undefined, next: Written, provider: Uid.Uid, identityUid: Uid.Uid) =>
    Effect.gen(function*() {
      const now = yield* DateTime.now
      const user: ScimUser.Record = {
        uid: record?.uid ?? Uid.makeChild(provider),
        identityUid,
        externalId: next.externalId,
        userName: next.userName,
        userNameKey: ScimUser.userNameKeyOf(next.userName),
        active: next.active,
        attributes: next.attributes,
        deleted: false,
        version: (record?.version ?? 0) + 1,
        createTime: record === undefined || record.deleted ? now : record.createTime,
        updateTime: now
      }
      if (record === undefined) yield* users.insert(user).pipe(taken)
      else if (record.deleted) {
        yield* users.update(user).pipe(
          taken,
          ChangeLog.typedAs("scim_user", "updated", ScimUser.table.events!.types.created)
        )
      } else yield* users.update(user).pipe(taken)
      return userOf(user)
    })

  /**
   * Runs `body` as one transaction, its writes attributed to the client: `scim:<provider uid>`. A write that would
   * leave the organization with no active owner (deactivating, deleting, or linking then deactivating, each of its
   * owners) is refused by the engine's invariant, as every path's is (`iam/internal/ownership`): provisioning never
   * locks an organization out, its SCIM settings included.
   */
  const asClient = <A, E, R>(client: Client, body: Effect.Effect<A, E, R>) =>
    commit(ops, Principal.system, ChangeLog.actingAs({ subject: `scim:${client.provider.uid}` })(body))

  /** Refuses a replacement that changes `externalId`: it is the person the user is. */
  const sameExternalId = (record: ScimUser.Record, next: Written) =>
    next.externalId === record.externalId
      ? Effect.void
      : Effect.fail(
        Errors.InvalidArgument.field("externalId", "is immutable: it is the person's subject at the provider")
      )

  const service: ScimUsersService = {
    createUser: (client: Client, input: unknown) =>
      operation("ScimUsers.createUser")(Effect.gen(function*() {
        const user = yield* written(input)
        const provider = client.provider
        return yield* asClient(
          client,
          Effect.gen(function*() {
            const [existing] = yield* users.find({
              conditions: [
                { _tag: "Equals", column: "parent", value: provider.uid },
                { _tag: "Equals", column: "externalId", value: user.externalId }
              ],
              order: [{ column: "uid", direction: "asc" }],
              limit: 1
            })
            if (existing !== undefined && !existing.deleted) {
              return yield* new Errors.AlreadyExists({
                resourceType: "User",
                description: "a user with that externalId exists"
              })
            }
            const person = yield* people.provision({
              issuer: provider.oidc.issuer,
              subject: user.externalId,
              email: user.email,
              emailVerified: false,
              name: typeof user.attributes.displayName === "string" ? user.attributes.displayName : user.userName
            }, { provider })
            return yield* save(existing, user, provider.uid, person.uid)
          })
        )
      })),

    getUser: (client: Client, id: string) => operation("ScimUsers.getUser")(Effect.map(stored(client, id), userOf)),

    listUsers: (client: Client, filter: Filter | undefined, page: Page) =>
      operation("ScimUsers.listUsers")(Effect.gen(function*() {
        const conditions: ReadonlyArray<Condition> = [
          ...live(client.provider.uid),
          ...(filter === undefined ? [] : [{
            _tag: "Equals" as const,
            column: filter.attribute === "userName" ? "userNameKey" : "externalId",
            value: filter.attribute === "userName" ? ScimUser.userNameKeyOf(filter.value) : filter.value
          }])
        ]
        const total = yield* users.count({ conditions })
        const found = page.count === 0 ? [] : yield* users.find({
          conditions,
          order: [{ column: "createTime", direction: "asc" }, { column: "uid", direction: "asc" }],
          offset: Math.max(0, page.startIndex - 1),
          limit: Math.min(page.count, maxPageSize)
        })
        return { total, users: found.map(userOf) }
      })),

    replaceUser: (client: Client, id: string, input: unknown, ifMatch?: ReadonlyArray<number>) =>
      operation("ScimUsers.replaceUser")(Effect.gen(function*() {
        const next = yield* written(input)
        return yield* asClient(
          client,
          Effect.gen(function*() {
            const record = yield* stored(client, id, ifMatch)
            yield* sameExternalId(record, next)
            return yield* save(record, next, client.provider.uid, record.identityUid)
          })
        )
      })),

    patchUser: <E>(
      client: Client,
      id: string,
      apply: (user: ScimUser.ScimUser) => Effect.Effect<unknown, E>,
      ifMatch?: ReadonlyArray<number>
    ) =>
      operation("ScimUsers.patchUser")(
        asClient(
          client,
          Effect.gen(function*() {
            const record = yield* stored(client, id, ifMatch)
            const next = yield* written(yield* apply(userOf(record)))
            yield* sameExternalId(record, next)
            return yield* save(record, next, client.provider.uid, record.identityUid)
          })
        )
      ),

    deleteUser: (client: Client, id: string, ifMatch?: ReadonlyArray<number>) =>
      operation("ScimUsers.deleteUser")(
        asClient(
          client,
          Effect.gen(function*() {
            const record = yield* stored(client, id, ifMatch)
            const now = yield* DateTime.now
            yield* users.update({
              ...record,
              deleted: true,
              active: false,
              userNameKey: ScimUser.deletedKey(record.uid),
              version: record.version + 1,
              updateTime: now
            }).pipe(unexpectedConflict, ChangeLog.typedAs("scim_user", "updated", ScimUser.table.events!.types.deleted))
          })
        )
      ),

    refuses: (providerUid: Uid.Uid, subject: string) =>
      Effect.map(
        users.find({
          conditions: [
            { _tag: "Equals", column: "parent", value: providerUid },
            { _tag: "Equals", column: "externalId", value: subject },
            { _tag: "Equals", column: "active", value: false }
          ],
          order: [{ column: "uid", direction: "asc" }],
          limit: 1
        }),
        (found) => found.length > 0
      )
  }
  return service
})

/** The ScimUsers service: a provider's people as its SCIM client provisions them (RFC 7643/7644). */
export interface ScimUsersService {
  /**
   * Provisions a user: the person of the provider whose subject is its `externalId`, made now (with the
   * provider's default role) when they have not signed in yet. One deleted before comes back; a `userName` or
   * `externalId` another user has is ALREADY_EXISTS.
   */
  readonly createUser: (client: Client, input: unknown) => Effect.Effect<ScimUser.ScimUser, Errors.WriteFailure>
  readonly getUser: (
    client: Client,
    id: string
  ) => Effect.Effect<ScimUser.ScimUser, Errors.ReadFailure | Errors.Aborted>
  /** The provider's users, oldest first, those the filter names only; with how many match in all. */
  readonly listUsers: (
    client: Client,
    filter: Filter | undefined,
    page: Page
  ) => Effect.Effect<{ readonly total: number; readonly users: ReadonlyArray<ScimUser.ScimUser> }, Errors.StoreFailure>
  /**
   * Replaces a user's attributes (RFC 7644 §3.5.1); its `externalId` cannot change. With `ifMatch`, only a user at
   * one of those versions (its `If-Match`, RFC 7644 §3.14), else ABORTED `ETAG_MISMATCH` and nothing changes; so
   * too for a patch and a delete.
   */
  readonly replaceUser: (
    client: Client,
    id: string,
    input: unknown,
    ifMatch?: ReadonlyArray<number>
  ) => Effect.Effect<ScimUser.ScimUser, Errors.WriteFailure>
  /**
   * Changes a user by `apply`, which the edge makes of a PATCH request (RFC 7644 §3.5.2): it is given the user
   * as stored, and what it returns is checked as a replacement is.
   */
  readonly patchUser: <E>(
    client: Client,
    id: string,
    apply: (user: ScimUser.ScimUser) => Effect.Effect<unknown, E>,
    ifMatch?: ReadonlyArray<number>
  ) => Effect.Effect<ScimUser.ScimUser, Errors.WriteFailure | Exclude<E, StoreError>>
  /**
   * Deletes a user: gone from SCIM, and its person can no longer sign in through the provider nor hold anything
   * in its organization, until the client creates the user again.
   */
  readonly deleteUser: (
    client: Client,
    id: string,
    ifMatch?: ReadonlyArray<number>
  ) => Effect.Effect<void, Errors.WriteFailure>
  /** True when provider `providerUid` provisioned the person `subject` and has since deactivated or deleted them. */
  readonly refuses: (providerUid: Uid.Uid, subject: string) => Effect.Effect<boolean, Errors.StoreFailure>
}

/** SCIM users. */
export class ScimUsers extends Effect.Service<ScimUsers>()("@arbor/core/ScimUsers", { effect: make }) {}
