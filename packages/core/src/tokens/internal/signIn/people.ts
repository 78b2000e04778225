/**
 * The People service: a person's sign-in, once their provider's ID token is verified. The first sign-in of an
 * (issuer, subject) makes their root-level identity and, when they came through an organization's identity
 * provider, binds its default role at its group; every sign-in advances `lastSeenTime` and takes up the email the
 * provider gives. An invite given at sign-in is redeemed for them.
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { commit, operations, trusted, unexpectedConflict } from "../../../engine/internal/operations.js"
import { operation } from "../../../engine/internal/tracing.js"
import * as Repository from "../../../engine/Repository.js"
import * as Uid from "../../../engine/Uid.js"
import { GroupInvites, redeemer } from "../../../iam/GroupInvites.js"
import * as Identity from "../../../iam/Identity.js"
import type * as IdentityProvider from "../../../iam/IdentityProvider.js"
import { stillGrantable } from "../../../iam/internal/roles.js"
import * as Principal from "../../../iam/Principal.js"
import * as Role from "../../../iam/Role.js"
import * as RoleBinding from "../../../iam/RoleBinding.js"
import * as Person from "./person.js"

/** Where a person's access comes from at sign-in. */
export interface Access {
  /** The organization's identity provider they came through; its default role is bound at their first sign-in. */
  readonly provider?: IdentityProvider.Record | undefined
  /** An invite code to redeem for them. */
  readonly invite?: string | undefined
}

/** How many suffixed names a new person's identity tries before giving up on a free one. */
const nameAttempts = 8

/** Builds the People service from the services in its context; `Arbor.layer` builds it with the others. */
export const make = Effect.gen(function*() {
  const ops = yield* operations
  const invites = yield* GroupInvites
  const identities = yield* Repository.make(Identity.table, Identity.Identity)
  const roles = yield* Repository.make(Role.table, Role.Role)
  const bindings = yield* Repository.make(RoleBinding.table, RoleBinding.Record)

  /**
   * The email a sign-in records (docs/api.md §10): verified only when the server's own provider says so. An
   * organization's provider is run by whoever owns it, so what it says of an email is kept as unverified, and
   * never reaches a token.
   */
  const emailOf = (claims: Person.Claims, access: Access) =>
    claims.email === undefined || claims.email === ""
      ? {}
      : claims.emailVerified && access.provider === undefined
      ? { email: claims.email }
      : { emailUnverified: claims.email }

  /** A name no other person's identity has: the derived one, else it with a random suffix. */
  const freeName = (claims: Person.Claims) =>
    Effect.gen(function*() {
      const base = Person.nameFor(claims)
      for (let attempt = 0; attempt < nameAttempts; attempt++) {
        const name = attempt === 0 ? base : Person.disambiguate(base)
        const taken = yield* identities.count({
          conditions: [{ _tag: "Equals", column: "parent", value: null }, {
            _tag: "Equals",
            column: "name",
            value: name
          }]
        })
        if (taken === 0) return name
      }
      return Person.disambiguate(`${base.slice(0, 40)}-${Date.now().toString(36)}`)
    })

  /** The person's identity made, with their default role when their provider's organization grants one. */
  const create = (claims: Person.Claims, access: Access, now: DateTime.Utc) =>
    Effect.gen(function*() {
      const identity = new Identity.Identity({
        uid: Person.uidFor(claims.issuer, claims.subject),
        name: yield* freeName(claims),
        description: "",
        claimMatch: { issuer: claims.issuer, subject: claims.subject },
        ...emailOf(claims, access),
        lastSeenTime: now,
        createTime: now,
        updateTime: now
      }, trusted)
      yield* identities.insert(identity).pipe(unexpectedConflict)
      yield* ops.store.insert(Person.table, {
        uid: identity.uid,
        parent: null,
        issuer: claims.issuer,
        subject: claims.subject,
        createTime: now.epochMillis
      }).pipe(unexpectedConflict, Repository.orInternal)
      const provider = access.provider
      const group = provider === undefined ? null : Uid.parentOrNull(provider.uid)
      if (provider !== undefined && group !== null) {
        const bound = yield* stillGrantable(ops.authorization, roles, {
          grantedBy: provider.grantedBy,
          capability: RoleBinding.permissions.create,
          roleUid: provider.defaultRole
        }, group)
        if (bound) {
          const binding: RoleBinding.Record = {
            uid: Uid.makeChild(group),
            parent: group,
            identityUid: identity.uid,
            roleUid: provider.defaultRole,
            startTime: null,
            expireTime: null,
            condition: null,
            elevationUid: null,
            endedTime: null,
            createTime: now,
            updateTime: now
          }
          yield* bindings.insert(binding).pipe(unexpectedConflict)
        } else {
          yield* Effect.logWarning("default role not bound: whoever last set the provider may not grant it now").pipe(
            Effect.annotateLogs({ provider: provider.uid, grantedBy: provider.grantedBy, identity: identity.uid })
          )
        }
      }
      return identity
    })

  /** The identity of the person `claims` names, when they have one. */
  const known = (claims: Person.Claims) =>
    Effect.flatMap(
      Person.find(ops.store, claims.issuer, claims.subject),
      (uid) => uid === undefined ? Effect.succeedNone : identities.get(uid)
    )

  return {
    /**
     * The person's identity, made as at a first sign-in (with their provider's default role) when they have none:
     * a person provisioned before they sign in. Runs in the caller's transaction.
     */
    provision: (claims: Person.Claims, access: Access) =>
      Effect.flatMap(known(claims), (current) =>
        Option.isSome(current)
          ? Effect.succeed(current.value)
          : Effect.flatMap(DateTime.now, (now) => create(claims, access, now))),

    /**
     * Signs a person in: their identity, made at the first sign-in of their (issuer, subject), with this sign-in's
     * time and email; then the invite redeemed for them, if one is given (refused as `redeem` refuses it; an invite
     * for an email needs that email verified, by the server's own provider or by an organization's provider at the
     * invite's group or above).
     */
    signIn: Effect.fnUntraced(function*(claims: Person.Claims, access: Access = {}) {
      // The server signs people in: the change log names the system as the actor of what a sign-in writes.
      const identity = yield* commit(
        ops,
        Principal.system,
        Effect.gen(function*() {
          const now = yield* DateTime.now
          const current = yield* known(claims)
          if (Option.isNone(current)) return yield* create(claims, access, now)
          const { email: _e, emailUnverified: _u, ...rest } = current.value
          const identity = new Identity.Identity({
            ...rest,
            ...emailOf(claims, access),
            lastSeenTime: DateTime.max(now, current.value.lastSeenTime)
          }, trusted)
          // Only a changed email is a change of the identity; the time it was last seen is not logged.
          const changed = identity.email !== current.value.email ||
            identity.emailUnverified !== current.value.emailUnverified
          yield* (changed ? identities.update(identity) : identities.rewrite(identity)).pipe(unexpectedConflict)
          return identity
        })
      )
      if (access.invite !== undefined) {
        yield* invites.redeem(
          Principal.system,
          access.invite,
          redeemer(identity.uid, claims.emailVerified ? claims.email : undefined, access.provider?.uid)
        )
      }
      return identity
    }, operation("People.signIn"))
  }
})

/** People who sign in. */
export class People extends Effect.Service<People>()("@arbor/core/People", { effect: make }) {}
