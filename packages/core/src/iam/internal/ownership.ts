/**
 * Every organization keeps at least one active owner (DECISIONS §20, §21): an identity bound `owner` at the
 * organization itself, by a binding that has started, never expires, has no condition and was not made by an
 * elevation, that no identity provider of the organization has deactivated or deleted by SCIM (which withdraws what
 * its bindings give there). Checked by the engine's repositories on every write of the tables that can take an owner
 * away, in the write's transaction (`engine/internal/invariants`): a binding deleted or changed, an identity deleted
 * (its bindings with it), a SCIM user deactivated, deleted or linked inactive; whatever surface asked for it. An
 * organization that had no active owner (one being built in-process) is not held to it until it has one.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { FailedPrecondition, PreconditionViolation } from "../../engine/Errors.js"
import type { Invariant } from "../../engine/internal/invariant.js"
import type { Row, StoreService } from "../../engine/Store.js"
import * as Uid from "../../engine/Uid.js"
import * as ScimUser from "../../provisioning/ScimUser.js"
import * as Role from "../Role.js"
import * as RoleBinding from "../RoleBinding.js"

/** The built-in owner role's uid. */
export const ownerRole = Role.builtInByName("owner")!.uid

/** True when `row` of role_bindings binds `owner` at an organization itself. */
const ownsOrganization = (row: Row) =>
  row.roleUid === ownerRole && row.parent !== null && Uid.parentOrNull(row.parent as Uid.Uid) === null

/**
 * The identities bound `owner` at `organization` for good: by a binding that has started, never expires, has no
 * condition and was not made by an elevation (one that ends, holds only sometimes, or stands only while its
 * elevation does, would leave the organization without an owner with no write to refuse).
 */
const ownersOf = (store: StoreService, organization: string) =>
  Effect.zipWith(
    store.find(RoleBinding.table, {
      conditions: [
        { _tag: "Equals", column: "parent", value: organization },
        { _tag: "Equals", column: "roleUid", value: ownerRole },
        { _tag: "Equals", column: "expireTime", value: null }
      ],
      order: [{ column: "uid", direction: "asc" }]
    }),
    Clock.currentTimeMillis,
    (rows, now) => [
      ...new Set(
        rows.filter((row) =>
          (row.startTime === null || Number(row.startTime) <= now) && (row.condition ?? null) === null &&
          (row.elevationUid ?? null) === null
        ).map((row) => row.identityUid as string)
      )
    ]
  )

/** The identities of `candidates` that a provider of `organization` itself has deactivated or deleted. */
const deprovisioned = (store: StoreService, organization: string, candidates: ReadonlyArray<string>) =>
  candidates.length === 0 ? Effect.succeed(new Set<string>()) : Effect.map(
    store.find(ScimUser.table, {
      ranges: [Uid.descendants(organization as Uid.Uid)],
      conditions: [
        { _tag: "In", column: "identityUid", values: candidates },
        { _tag: "Equals", column: "active", value: false }
      ],
      order: [{ column: "uid", direction: "asc" }]
    }),
    (rows) =>
      new Set(
        rows.filter((row) => Uid.parentOrNull(row.parent as Uid.Uid) === organization).map((row) =>
          row.identityUid as string
        )
      )
  )

export const keepsAnOwner: Invariant = {
  tables: [RoleBinding.table.name, ScimUser.table.name],
  affected: (table, rows) =>
    table === RoleBinding.table.name
      ? rows.filter(ownsOrganization).map((row) => row.parent as string)
      : rows.map((row) => Uid.rootOf(row.uid as Uid.Uid)),
  holds: (store, organization) =>
    Effect.flatMap(ownersOf(store, organization), (owners) =>
      Effect.map(
        deprovisioned(store, organization, owners),
        (stopped) => owners.some((identity) => !stopped.has(identity))
      )),
  broken: (organization) =>
    new FailedPrecondition({
      summary: "an organization keeps at least one active owner",
      violations: [
        new PreconditionViolation({
          type: "LAST_OWNER",
          subject: organization,
          description: "this change would leave the organization with no active owner (an identity bound owner " +
            "there that no provider has deactivated); bind another owner first"
        })
      ],
      reason: "LAST_OWNER"
    })
}
