/**
 * The GroupInvites service: list, get, create, update and delete invites, and redeem one for an identity.
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import { createHash, timingSafeEqual } from "node:crypto"
import * as Errors from "../engine/Errors.js"
import * as FieldMask from "../engine/internal/lists/fieldMask.js"
import { commit, operations, orNotFound, trusted, unexpectedConflict } from "../engine/internal/operations.js"
import * as Resources from "../engine/internal/resources.js"
import { operation } from "../engine/internal/tracing.js"
import * as Lists from "../engine/Lists.js"
import * as Repository from "../engine/Repository.js"
import type * as ResourceService from "../engine/ResourceService.js"
import * as Uid from "../engine/Uid.js"
import * as Validation from "../engine/Validation.js"
import type { Grants } from "./Authorization.js"
import { atGroup } from "./Authorization.js"
import * as Group from "./Group.js"
import * as GroupInvite from "./GroupInvite.js"
import * as Identity from "./Identity.js"
import { canReadRole, grantable, grantor, stillGrantable } from "./internal/roles.js"
import * as Principal from "./Principal.js"
import * as Role from "./Role.js"
import * as RoleBinding from "./RoleBinding.js"
import { RoleBindings } from "./RoleBindings.js"

const codePattern = /^([0-9a-f]{16})\.([A-Za-z0-9_-]{43})$/

const hashCode = (code: string) => createHash("sha256").update(code).digest("hex")

/** A new invite code: a public key id, a dot, and 32 random bytes. */
const newCode = () => {
  const keyId = Buffer.from(crypto.getRandomValues(new Uint8Array(8))).toString("hex")
  const secret = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url")
  return { keyId, code: `${keyId}.${secret}` }
}

const refused = (type: string, subject: string, summary: string) =>
  new Errors.FailedPrecondition({
    summary,
    violations: [new Errors.PreconditionViolation({ type, subject, description: summary })]
  })

/**
 * Who redeems an invite, as a sign-in vouches for them: the identity, the email its provider verified, and where that
 * email counts (an organization's provider vouches for it only for invites at its own group or below; the server's
 * own, everywhere). The same at sign-in (`invite=`) and by `:redeem` with the token that sign-in gave.
 */
export const redeemer = (identityUid: Uid.Uid, verifiedEmail: string | undefined, provider: Uid.Uid | undefined) => {
  const vouchedBelow = provider === undefined ? null : Uid.parentOrNull(provider)
  return {
    identityUid,
    ...(verifiedEmail === undefined ? {} : { email: verifiedEmail }),
    ...(vouchedBelow === null ? {} : { emailVouchedBelow: vouchedBelow })
  }
}

/** Builds the GroupInvites service from the services in its context; `Arbor.layer` builds it with the others. */
export const make = Effect.gen(function*() {
  const ops = yield* operations
  const invites = yield* Repository.make(GroupInvite.table, GroupInvite.Record)
  const groups = yield* Repository.make(Group.table, Group.Group)
  const roles = yield* Repository.make(Role.table, Role.Role)
  const identities = yield* Repository.make(Identity.table, Identity.Identity)
  const bindings = yield* Repository.make(RoleBinding.table, RoleBinding.Record)
  const roleBindings = yield* RoleBindings
  const authorization = ops.authorization

  /** Invites as returned, with their roles embedded as far as the caller may read them; never their codes. */
  const present = (records: ReadonlyArray<GroupInvite.Record>, grants: Grants) =>
    Effect.map(roles.getMany([...new Set(records.map((r) => r.roleUid))]), (found) => {
      const byUid = new Map(found.map((r) => [r.uid, r]))
      return records.map(({ codeHash: _h, email, grantedBy: _g, parent: _p, redeemed: _r, ...r }) => {
        const role = canReadRole(grants, r.roleUid) ? byUid.get(r.roleUid) : undefined
        return new GroupInvite.GroupInvite({
          ...r,
          ...(email === null ? {} : { email }),
          role: { uid: r.roleUid, name: role?.name ?? "", description: role?.description ?? "" }
        }, trusted)
      })
    })
  const presentOne = (record: GroupInvite.Record, grants: Grants) =>
    Effect.map(present([record], grants), (xs) => xs[0]!)

  const kind: Resources.Kind<GroupInvite.Record> = {
    resourceType: "group invite",
    repository: invites,
    permissions: GroupInvite.permissions,
    groupOf: Resources.parentGroup
  }
  const spec: Lists.ListSpec<GroupInvite.GroupInvite, GroupInvite.Record> = {
    target: (uid) => Resources.targetOf(kind, uid),
    repository: invites,
    capability: GroupInvite.permissions.list,
    visibleAt: "parent",
    defaultOrder: "create_time desc",
    load: present
  }

  const redeem = (
    principal: Principal.Principal,
    code: string,
    redeemer: { readonly identityUid: string; readonly email?: string; readonly emailVouchedBelow?: string }
  ) =>
    Effect.gen(function*() {
      const identityUid = yield* Uid.parse(redeemer.identityUid, "identityUid")
      if (principal._tag === "Identity" && principal.uid !== identityUid) {
        return yield* new Errors.PermissionDenied({ capability: "group_invites.redeem", resource: identityUid })
      }
      const match = codePattern.exec(code)
      if (match === null) return yield* Errors.InvalidArgument.field("code", "is not an invite code")
      const keyId = match[1]!
      // The redeemer is who acts, whoever carries the call: a sign-in redeems for a person who has no token yet, and
      // the audit trail names the person, not the system.
      const actor = principal._tag === "Identity"
        ? principal
        : Principal.identity(identityUid, redeemer.email === undefined ? {} : { email: redeemer.email })
      const bindingUid = yield* commit(
        ops,
        actor,
        Effect.gen(function*() {
          const [invite] = yield* invites.find({
            conditions: [{ _tag: "Equals", column: "keyId", value: keyId }],
            order: [{ column: "uid", direction: "asc" }],
            limit: 1
          })
          const given = Buffer.from(hashCode(code), "hex")
          if (invite === undefined || !timingSafeEqual(given, Buffer.from(invite.codeHash, "hex"))) {
            return yield* new Errors.NotFound({ resourceType: "group invite", uid: keyId })
          }
          const now = yield* DateTime.now
          if (DateTime.greaterThan(now, invite.expirationTime)) {
            return yield* refused("INVITE_EXPIRED", invite.uid, "the invite has expired")
          }
          if (invite.singleUse && invite.redeemed) {
            return yield* refused("INVITE_USED", invite.uid, "the invite has already been used")
          }
          const authorized = yield* stillGrantable(authorization, roles, {
            grantedBy: invite.grantedBy,
            capability: GroupInvite.permissions.create,
            roleUid: invite.roleUid
          }, invite.parent)
          if (!authorized) {
            yield* Effect.logWarning("invite refused: whoever made it may no longer grant its role").pipe(
              Effect.annotateLogs({ invite: invite.uid, grantedBy: invite.grantedBy })
            )
            return yield* refused("INVITE_NOT_GRANTABLE", invite.uid, "the invite is no longer valid")
          }
          if (invite.email !== null) {
            const vouched = redeemer.emailVouchedBelow === undefined ||
              Uid.isAncestorOrSelf(redeemer.emailVouchedBelow, invite.parent)
            if (!vouched || invite.email.toLowerCase() !== redeemer.email?.toLowerCase()) {
              return yield* refused("EMAIL_MISMATCH", invite.uid, "the invite is for another email address")
            }
          }
          yield* orNotFound(identities.get(identityUid), "identity", identityUid)
          yield* orNotFound(roles.get(invite.roleUid), "role", invite.roleUid)
          const [existing] = yield* bindings.find({
            conditions: [
              { _tag: "Equals", column: "parent", value: invite.parent },
              { _tag: "Equals", column: "identityUid", value: identityUid },
              { _tag: "Equals", column: "roleUid", value: invite.roleUid }
            ],
            order: [{ column: "uid", direction: "asc" }],
            limit: 1
          })
          yield* invites.update({ ...invite, redeemed: true, updateTime: now }).pipe(unexpectedConflict)
          if (existing !== undefined) return existing.uid
          const binding: RoleBinding.Record = {
            uid: Uid.makeChild(invite.parent),
            parent: invite.parent,
            identityUid,
            roleUid: invite.roleUid,
            startTime: null,
            expireTime: null,
            condition: null,
            elevationUid: null,
            endedTime: null,
            createTime: now,
            updateTime: now
          }
          yield* bindings.insert(binding).pipe(unexpectedConflict)
          return binding.uid
        })
      )
      return yield* roleBindings.get(Principal.system, bindingUid)
    })

  const service: GroupInvitesService = {
    redeemOwn: Effect.fnUntraced(function*(principal: Principal.Principal, input: GroupInvite.RedeemGroupInvite) {
      if (principal._tag !== "Identity") {
        return yield* Errors.InvalidArgument.field("principal", "only an identity redeems an invite for itself")
      }
      if (!Principal.actsAsItself(principal, principal.uid)) {
        return yield* new Errors.PermissionDenied({ capability: "group_invites.redeem", resource: principal.uid })
      }
      const { code } = yield* Validation.decodeRequest(GroupInvite.RedeemGroupInvite)(input)
      // The token's email is one its sign-in's provider verified (DECISIONS §10): vouched for as at that sign-in.
      return yield* redeem(principal, code, redeemer(principal.uid, principal.email, principal.provider))
    }, operation("GroupInvites.redeemOwn")),

    list: (principal: Principal.Principal, options: Lists.ListOptions = {}) =>
      operation("GroupInvites.list")(Lists.list(ops, spec, principal, options)),

    get: (principal: Principal.Principal, uid: string) =>
      operation("GroupInvites.get")(Resources.getPresented(ops, kind, principal, uid, presentOne)),

    create: Effect.fnUntraced(function*(principal: Principal.Principal, groupUid: string, input: unknown) {
      const group = yield* Uid.parse(groupUid, "parent")
      const grants = yield* authorization.grants(principal)
      yield* authorization.check(principal, GroupInvite.permissions.create, atGroup(group), grants)
      const fields = yield* Validation.decodeRequest(GroupInvite.CreateGroupInvite, GroupInvite.fields)(input)
      return yield* commit(
        ops,
        principal,
        Effect.gen(function*() {
          yield* orNotFound(groups.get(group), "group", group)
          yield* grantable(roles, grants, fields.roleUid, group)
          const now = yield* DateTime.now
          const { code, keyId } = newCode()
          const record: GroupInvite.Record = {
            uid: Uid.makeChild(group),
            parent: group,
            roleUid: fields.roleUid,
            email: fields.email ?? null,
            expirationTime: DateTime.addDuration(now, fields.ttl ?? GroupInvite.defaultTtl),
            singleUse: fields.singleUse,
            keyId,
            codeHash: hashCode(code),
            redeemed: false,
            grantedBy: grantor(principal),
            createTime: now,
            updateTime: now
          }
          yield* invites.insert(record).pipe(unexpectedConflict)
          const invite = new GroupInvite.GroupInvite({ ...(yield* presentOne(record, grants)), code }, trusted)
          return invite
        })
      )
    }, operation("GroupInvites.create")),

    update: (
      principal: Principal.Principal,
      uid: string,
      patch: unknown,
      updateMask?: string
    ) =>
      operation("GroupInvites.update")(Resources.updatePresented(ops, kind, principal, uid, {
        patch,
        updateMask,
        fields: GroupInvite.fields,
        apply: (current, request) =>
          Validation.decodeRequest(GroupInvite.UpdateGroupInvite, GroupInvite.fields)(
            FieldMask.apply(
              { ...(current.email === null ? {} : { email: current.email }), singleUse: current.singleUse },
              request.body,
              request.mask,
              GroupInvite.fields
            )
          ).pipe(Effect.map((fields) => ({
            ...current,
            email: fields.email ?? null,
            singleUse: fields.singleUse,
            grantedBy: grantor(principal),
            updateTime: request.updateTime
          }))),
        present: presentOne
      })),

    delete: (principal: Principal.Principal, uid: string) =>
      operation("GroupInvites.delete")(Resources.remove<GroupInvite.Record, never, never>(ops, kind, principal, uid)),

    redeem
  }
  return service
})

/**
 * The GroupInvites service. An invite is for a role its creator may grant in its group; its code is in the
 * create's answer only, never again. An update changes its email or whether it is single-use. Lists are newest
 * first by default.
 */
export interface GroupInvitesService extends ResourceService.Writable<GroupInvite.GroupInvite> {
  /**
   * Redeems an invite code for an identity: binds it to the invite's role in the invite's group, atomically.
   * Refuses expired invites, used single-use ones, and, for an invite with an email, any other `email`, and an
   * `email` vouched for only below `emailVouchedBelow` (by an organization's provider there) when the invite is
   * elsewhere. The caller is the identity itself, or the system principal acting for it. Returns the (hydrated)
   * binding; an identity that already holds the role keeps its binding.
   */
  readonly redeem: (
    principal: Principal.Principal,
    code: string,
    redeemer: { readonly identityUid: string; readonly email?: string; readonly emailVouchedBelow?: string }
  ) => Effect.Effect<RoleBinding.RoleBinding, Errors.WriteFailure>
  /** Redeems an invite for the calling identity itself (the request body of `redeem` over HTTP), as `redeem`. */
  readonly redeemOwn: (
    principal: Principal.Principal,
    input: GroupInvite.RedeemGroupInvite
  ) => Effect.Effect<RoleBinding.RoleBinding, Errors.WriteFailure>
}

/** Group invites: codes that bind their redeemer to a role in a group. */
export class GroupInvites extends Effect.Service<GroupInvites>()("@arbor/core/GroupInvites", { effect: make }) {}
