/**
 * The Identities service: list, get, create, update and delete identities.
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import * as Errors from "../engine/Errors.js"
import * as FieldMask from "../engine/internal/lists/fieldMask.js"
import {
  commit,
  insertNamed,
  operations,
  orNotFound,
  trusted,
  unexpectedConflict
} from "../engine/internal/operations.js"
import * as Resources from "../engine/internal/resources.js"
import { operation } from "../engine/internal/tracing.js"
import * as Lists from "../engine/Lists.js"
import * as Repository from "../engine/Repository.js"
import type * as ResourceService from "../engine/ResourceService.js"
import type { Condition } from "../engine/Store.js"
import * as Uid from "../engine/Uid.js"
import * as Validation from "../engine/Validation.js"
import { LastSeen } from "../tokens/internal/lastSeen.js"
import * as RefreshToken from "../tokens/internal/refreshToken.js"
import * as Person from "../tokens/internal/signIn/person.js"
import * as IssuerUrl from "../tokens/IssuerUrl.js"
import type { Grants } from "./Authorization.js"
import { atGroup } from "./Authorization.js"
import type { StaticKeys } from "./ClaimMatch.js"
import * as Elevation from "./Elevation.js"
import * as Eligibility from "./Eligibility.js"
import * as Group from "./Group.js"
import * as Identity from "./Identity.js"
import * as IdentityMetadata from "./IdentityMetadata.js"
import { requireAll } from "./internal/roles.js"
import * as Principal from "./Principal.js"
import * as RoleBinding from "./RoleBinding.js"

/** The kinds of identity `relationship_type` names (the protos' `RelationshipType`), and the condition of each. */
const relationships: Readonly<Record<string, Condition>> = {
  RELATIONSHIP_TYPE_CLAIM_MATCH: { _tag: "Equals", column: "staticKeys", value: null },
  RELATIONSHIP_TYPE_STATIC: { _tag: "Equals", column: "claimMatch", value: null },
  // Kinds the engine has none of.
  RELATIONSHIP_TYPE_AWS_IDENTITY: { _tag: "In", column: "parent", values: [] },
  RELATIONSHIP_TYPE_SERVICE_PRINCIPAL: { _tag: "In", column: "parent", values: [] }
}

/** The filters of a list of identities, beside the common list parameters. */
export interface IdentityListOptions extends Lists.ListOptions {
  /** Only identities of this kind: `RELATIONSHIP_TYPE_CLAIM_MATCH` or `RELATIONSHIP_TYPE_STATIC` (the protos'). */
  readonly relationshipType?: string | undefined
}

/** The filters as store conditions, with the violations found reading them. */
export const filters = (options: IdentityListOptions): Lists.Filters => {
  const type = options.relationshipType
  if (type === undefined || type === "RELATIONSHIP_TYPE_UNSPECIFIED") return { conditions: [], digest: [] }
  const condition = relationships[type]
  return condition === undefined
    ? {
      conditions: [],
      digest: [],
      violations: [
        new Errors.FieldViolation({
          field: "relationship_type",
          description: `'${type}' is not one of RELATIONSHIP_TYPE_UNSPECIFIED, ${Object.keys(relationships).join(", ")}`
        })
      ]
    }
    : { conditions: [condition], digest: [type] }
}

/** How long static keys are trusted at most, and by default. */
export const maxStaticKeysLifetime = { days: 365 } as const

/** An identity to create: in group `groupUid`, from the request body `input`; its refused fields named below `at`. */
export interface Creation {
  readonly groupUid: string
  readonly input: unknown
  readonly at?: string | undefined
}

/** Builds the Identities service from the services in its context; `Arbor.layer` builds it with the others. */
export const make = Effect.gen(function*() {
  const ops = yield* operations
  const lastSeen = yield* LastSeen
  const identities = yield* Repository.make(Identity.table, Identity.Identity)
  const groups = yield* Repository.make(Group.table, Group.Group)
  const bindings = yield* Repository.make(RoleBinding.table, RoleBinding.Record)
  const metadata = yield* Repository.make(IdentityMetadata.table, IdentityMetadata.Stored)
  const eligibilities = yield* Repository.make(Eligibility.table, Eligibility.Record)
  const elevations = yield* Repository.make(Elevation.table, Elevation.Record)
  const authorization = ops.authorization
  const spec: Lists.ListSpec<Identity.Identity> = {
    target: (uid) => Resources.targetOf(kind, uid),
    repository: identities,
    capability: Identity.permissions.list,
    visibleAt: "parent",
    load: (records) => Effect.succeed(records.map(lastSeen.overlay))
  }

  /** Validates the caller's fields of an identity created at `createTime`. */
  const validate = (input: unknown, createTime: DateTime.Utc) =>
    Effect.gen(function*() {
      const fields = yield* Validation.decodeRequest(Identity.CreateIdentity, Identity.fields)(input)
      const issuer = (url: string | undefined) =>
        url === undefined ? undefined : IssuerUrl.error(url, { allowLoopback: ops.settings.allowLoopbackHttpIssuers })
      const latest = DateTime.add(createTime, maxStaticKeysLifetime)
      const violations = [
        ["claimMatch.issuer", issuer(fields.claimMatch?.issuer)],
        ["staticKeys.issuer", issuer(fields.staticKeys?.issuer)],
        [
          "staticKeys.expirationTime",
          fields.staticKeys?.expirationTime !== undefined &&
            DateTime.greaterThan(fields.staticKeys.expirationTime, latest)
            ? "must be at most 365 days after the identity was created"
            : undefined
        ]
      ].flatMap(([field, description]) =>
        description === undefined ? [] : [new Errors.FieldViolation({ field: field!, description })]
      )
      const [first, ...rest] = violations
      if (first !== undefined) return yield* new Errors.InvalidArgument({ violations: [first, ...rest] })
      const staticKeys: StaticKeys | undefined = fields.staticKeys === undefined ? undefined : {
        ...fields.staticKeys,
        expirationTime: fields.staticKeys.expirationTime ?? latest
      }
      return {
        name: fields.name,
        description: fields.description,
        ...(fields.claimMatch === undefined ? {} : { claimMatch: fields.claimMatch }),
        ...(staticKeys === undefined ? {} : { staticKeys })
      }
    })

  /** Creates identities, each in its group, in one write: all or none. */
  const insert = (principal: Principal.Principal, creations: ReadonlyArray<Creation>) =>
    Effect.gen(function*() {
      const now = yield* DateTime.now
      // Each a step of its own (`Effect.forEach`): a large batch lets other requests in between (`Fairness`).
      const made = yield* Effect.forEach(creations, ({ at, groupUid, input }) =>
        Effect.gen(function*() {
          const group = yield* Uid.parse(groupUid, "parent")
          yield* authorization.check(principal, Identity.permissions.create, atGroup(group))
          const fields = yield* validate(input, now).pipe(
            Effect.mapError((e) => at === undefined ? e : e.within(at))
          )
          return new Identity.Identity({
            uid: Uid.makeChild(group),
            ...fields,
            lastSeenTime: now,
            createTime: now,
            updateTime: now
          }, trusted)
        }))
      return yield* commit(
        ops,
        principal,
        Effect.as(
          insertNamed(
            identities,
            groups,
            "identity",
            made,
            (identity) => `an identity named '${identity.name}' already exists in ${Uid.parentOrNull(identity.uid)}`
          ),
          made
        )
      )
    })

  /** The identity's fields as a create request would give them. */
  const asInput = (identity: Identity.Identity): Record<string, unknown> => ({
    name: identity.name,
    description: identity.description,
    ...(identity.claimMatch === undefined ? {} : { claimMatch: identity.claimMatch }),
    ...(identity.staticKeys === undefined ? {} : {
      staticKeys: { ...identity.staticKeys, expirationTime: DateTime.formatIso(identity.staticKeys.expirationTime) }
    })
  })

  const kind: Resources.Kind<Identity.Identity> = {
    resourceType: "identity",
    repository: identities,
    permissions: Identity.permissions,
    groupOf: Resources.parentGroup
  }

  /**
   * Deletes the identity's refresh tokens, its sign-in record, its metadata, its role bindings and its eligibilities,
   * wherever they are, and revokes its open elevations (no grant outlives its identity).
   */
  const deleteBindings = (identity: Identity.Identity) =>
    Effect.gen(function*() {
      const own: ReadonlyArray<Condition> = [{ _tag: "Equals", column: "identityUid", value: identity.uid }]
      yield* ops.store.delete(RefreshToken.table, {
        conditions: [{ _tag: "Equals", column: "parent", value: identity.uid }]
      })
      yield* ops.store.delete(Person.table, { ranges: [Uid.only(identity.uid)] })
      yield* bindings.delete({ conditions: own })
      yield* metadata.delete({ ranges: [Uid.only(identity.uid)] })
      yield* eligibilities.delete({ conditions: own })
      const open = yield* elevations.find({
        conditions: [...own, { _tag: "In", column: "state", values: ["PENDING", "ACTIVE"] }],
        order: [{ column: "uid", direction: "asc" }]
      })
      const now = yield* DateTime.now
      for (const elevation of open) {
        yield* unexpectedConflict(elevations.update({ ...elevation, state: "REVOKED", updateTime: now }))
      }
    })

  /**
   * No escalation through identities (docs/api.md §7): whoever changes how an identity is assumed could then act as
   * it, so they must hold every capability the identity holds, at each group where it holds it, that of its
   * bindings that start later included (they grant with no further write).
   */
  const requireEverythingHeldBy = (grants: Grants, identity: Uid.Uid) =>
    Effect.flatMap(
      authorization.heldAhead(identity),
      (held) =>
        Effect.forEach(held.everyGrant, (g) => requireAll(grants, [...g.capabilities], g.group), { discard: true })
    )

  /**
   * The principal an operation on `uid` runs as: a person acting on their own (root-level) identity acts with full
   * authority over it (not with a narrowed token); anyone else as themselves.
   */
  const actingOn = (principal: Principal.Principal, uid: string): Principal.Principal =>
    Principal.actsAsItself(principal, uid) && Uid.isUid(uid) && Uid.parentOrNull(uid) === null
      ? Principal.system
      : principal

  /** What a person may change of their own identity. */
  const ownFields = ["name", "description"]

  const service: IdentitiesService = {
    list: (principal: Principal.Principal, options: IdentityListOptions = {}) =>
      operation("Identities.list")(Lists.list(ops, spec, principal, options, filters(options))),

    get: (principal: Principal.Principal, uid: string) =>
      operation("Identities.get")(
        Effect.map(
          Resources.get(ops, kind, Principal.actsAsItself(principal, uid) ? Principal.system : principal, uid),
          lastSeen.overlay
        )
      ),

    lookup: (input: { readonly issuer: string; readonly subject: string }) =>
      operation("Identities.lookup")(Effect.gen(function*() {
        const violations = (["issuer", "subject"] as const).filter((field) => input[field] === "").map((field) =>
          new Errors.FieldViolation({ field, description: "is required" })
        )
        const [first, ...rest] = violations
        if (first !== undefined) return yield* new Errors.InvalidArgument({ violations: [first, ...rest] })
        const known = yield* Person.find(ops.store, input.issuer, input.subject)
        return { uid: known ?? Person.uidFor(input.issuer, input.subject) }
      })),

    updateMetadata: Effect.fnUntraced(function*(principal: Principal.Principal, request: {
      readonly identityMetadata?: unknown
      readonly updateMask?: string | undefined
    }) {
      if (principal._tag !== "Identity" || !Principal.actsAsItself(principal, principal.uid)) {
        return yield* new Errors.PermissionDenied({ capability: "identity.update", resource: "identity metadata" })
      }
      const patch = request.identityMetadata ?? {}
      if (typeof patch !== "object" || patch === null || Array.isArray(patch)) {
        return yield* Errors.InvalidArgument.field("identityMetadata", "must be an object")
      }
      const mask = yield* FieldMask.parse(request.updateMask, IdentityMetadata.fields)
      return yield* commit(
        ops,
        principal,
        Effect.gen(function*() {
          const identity = yield* orNotFound(identities.get(principal.uid), "identity", principal.uid)
          const current = yield* metadata.get(identity.uid)
          const before = current._tag === "Some" ? current.value.fields : undefined
          const fields = yield* Validation.decodeRequest(IdentityMetadata.Fields, {
            ...IdentityMetadata.fields,
            prefix: "identityMetadata"
          })(
            FieldMask.apply(before ?? {}, patch as Record<string, unknown>, mask, IdentityMetadata.fields)
          )
          const changed = before === undefined ||
            Object.keys(fields).some((k) => fields[k as keyof typeof fields] !== before[k as keyof typeof fields])
          if (changed) {
            const stored = new IdentityMetadata.Stored(
              { uid: identity.uid, fields, updateTime: yield* DateTime.now },
              trusted
            )
            yield* (before === undefined ? metadata.insert(stored) : metadata.update(stored)).pipe(
              unexpectedConflict
            )
          }
          return new IdentityMetadata.IdentityMetadata({
            uid: identity.uid,
            name: identity.name,
            ...IdentityMetadata.namesOf(identity.name),
            ...fields
          }, trusted)
        })
      )
    }, operation("Identities.updateMetadata")),

    create: Effect.fnUntraced(function*(principal: Principal.Principal, groupUid: string, input: unknown) {
      return (yield* insert(principal, [{ groupUid, input }]))[0]!
    }, operation("Identities.create")),

    createMany: (principal: Principal.Principal, creations: ReadonlyArray<Creation>) =>
      operation("Identities.createMany")(insert(principal, creations)),

    update: (
      principal: Principal.Principal,
      uid: string,
      patch: unknown,
      updateMask?: string
    ) =>
      operation("Identities.update")(
        Effect.gen(function*() {
          const actor = actingOn(principal, uid)
          if (actor === principal) return actor
          const mask = yield* FieldMask.parse(updateMask, Identity.fields)
          const body = Predicate.isRecord(patch) ? patch : {}
          const changed = FieldMask.changed(body, mask, Identity.fields).filter((f) => !ownFields.includes(f))
          if (changed.length > 0) {
            return yield* new Errors.PermissionDenied({ capability: Identity.permissions.update, resource: uid })
          }
          return actor
        }).pipe(
          Effect.flatMap((actor) =>
            Resources.update(ops, kind, actor, uid, {
              patch,
              updateMask,
              fields: Identity.fields,
              apply: (current, { body, grants, mask, updateTime }) =>
                Effect.gen(function*() {
                  const changed = FieldMask.changed(body, mask, Identity.fields)
                  const merged = FieldMask.apply(asInput(current), body, mask, Identity.fields)
                  if (
                    changed.includes("claimMatch") && body.claimMatch !== undefined && !changed.includes("staticKeys")
                  ) {
                    delete merged.staticKeys
                  }
                  if (
                    changed.includes("staticKeys") && body.staticKeys !== undefined && !changed.includes("claimMatch")
                  ) {
                    delete merged.claimMatch
                  }
                  const fields = yield* validate(merged, current.createTime)
                  if (Identity.assumption(fields) !== Identity.assumption(current)) {
                    yield* requireEverythingHeldBy(grants, current.uid)
                  }
                  return new Identity.Identity({
                    uid: current.uid,
                    ...fields,
                    ...(current.email === undefined ? {} : { email: current.email }),
                    ...(current.emailUnverified === undefined ? {} : { emailUnverified: current.emailUnverified }),
                    lastSeenTime: current.lastSeenTime,
                    createTime: current.createTime,
                    updateTime
                  }, trusted)
                }),
              duplicate: (next) => `an identity named '${next.name}' already exists beside ${next.uid}`
            })
          ),
          Effect.map(lastSeen.overlay)
        )
      ),

    delete: (principal: Principal.Principal, uid: string) =>
      operation("Identities.delete")(
        Resources.remove(ops, kind, actingOn(principal, uid), uid, { before: deleteBindings })
      )
  }
  return service
})

/**
 * The Identities service. Lists take `relationship_type`; a caller reads its own identity without `identity.list`
 * (a workload in a folder reads itself as a person does). Changing `claimMatch` or `staticKeys` (one choice: setting
 * one clears the other) needs, besides `identity.update`, every capability the identity holds through its bindings,
 * where it holds them. A person may change the name and description of their own identity, and delete it; a delete
 * takes, atomically, every role binding and refresh token of the identity.
 */
export interface IdentitiesService extends ResourceService.Writable<Identity.Identity, IdentityListOptions> {
  /**
   * The uid of the person who signs in with `issuer` and `subject`: theirs if they have signed in, else the one
   * they will get (`LookupIdentity`). Any caller may ask.
   */
  readonly lookup: (
    input: { readonly issuer: string; readonly subject: string }
  ) => Effect.Effect<{ readonly uid: Uid.Uid }, Errors.ListFailure>
  /**
   * Updates the caller's own metadata (`UpdateIdentityMetadata`): any identity may, on itself only, but not with a
   * narrowed token. `request` is `{identityMetadata, updateMask}`; without a mask, the fields present change.
   */
  readonly updateMetadata: (
    principal: Principal.Principal,
    request: { readonly identityMetadata?: unknown; readonly updateMask?: string | undefined }
  ) => Effect.Effect<IdentityMetadata.IdentityMetadata, Errors.WriteFailure>
  /**
   * Creates identities in their groups as `create` does each, in one write: all or none. For many at once (an
   * `:apply`), in a few statements rather than a few each. A creation's refused field is named below its `at`.
   */
  readonly createMany: (
    principal: Principal.Principal,
    creations: ReadonlyArray<Creation>
  ) => Effect.Effect<Array<Identity.Identity>, Errors.WriteFailure>
}

/** Identities, assumable by matching token claims. */
export class Identities extends Effect.Service<Identities>()("@arbor/core/Identities", { effect: make }) {}
