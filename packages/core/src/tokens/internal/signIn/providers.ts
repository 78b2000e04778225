/** Which OpenID provider a sign-in goes through: the server's own, or an organization's `IdentityProvider`. */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type { ArborError } from "../../../engine/Errors.js"
import { FailedPrecondition, NotFound, PreconditionViolation } from "../../../engine/Errors.js"
import * as Repository from "../../../engine/Repository.js"
import * as Sealing from "../../../engine/Sealing.js"
import { Secrets } from "../../../engine/Secrets.js"
import * as Uid from "../../../engine/Uid.js"
import * as Group from "../../../iam/Group.js"
import * as IdentityProvider from "../../../iam/IdentityProvider.js"
import * as SignIn from "../../SignIn.js"

/** A provider as a sign-in uses it. */
export interface Provider {
  /** The identity provider's uid; empty for the server's own. */
  readonly id: string
  readonly issuer: string
  readonly clientId: string
  /** Empty for a public client. */
  readonly clientSecret: string
  readonly scopes: ReadonlyArray<string>
  /** The organization's identity provider, when it is one. */
  readonly record?: IdentityProvider.Record | undefined
}

export const make = Effect.gen(function*() {
  const login = yield* SignIn.LoginSettings
  const { sealing } = yield* Secrets
  const providers = yield* Repository.make(IdentityProvider.table, IdentityProvider.Record)
  const groups = yield* Repository.make(Group.table, Group.Group)

  const fromRecord = (record: IdentityProvider.Record) =>
    Effect.map(Sealing.open(sealing, record.oidc.clientSecret), (clientSecret): Provider => ({
      id: record.uid,
      issuer: record.oidc.issuer,
      clientId: record.oidc.clientId,
      clientSecret,
      scopes: record.oidc.additionalScopes,
      record
    }))

  /** The server's own provider, unless it has none. */
  const own = Effect.suspend(() => {
    const configured = login.provider
    if (configured === undefined) {
      const summary = "this server has no sign-in provider; name an organization's (idp_id)"
      return Effect.fail(
        new FailedPrecondition({
          summary,
          violations: [new PreconditionViolation({ type: "NO_PROVIDER", subject: "", description: summary })]
        })
      )
    }
    return Effect.succeed<Provider>({
      id: "",
      issuer: configured.issuer,
      clientId: configured.clientId,
      clientSecret: Redacted.value(configured.clientSecret),
      scopes: configured.scopes
    })
  })

  /** The first provider (by name) of an organization, named by uid or name. */
  const ofOrganization = (organization: string) =>
    Effect.gen(function*() {
      const notFound = new NotFound({ resourceType: "identity provider", uid: organization })
      let uid: string | undefined = Uid.isUid(organization) ? organization : undefined
      if (uid === undefined) {
        const [named] = yield* groups.find({
          conditions: [
            { _tag: "Equals", column: "parent", value: null },
            { _tag: "Equals", column: "name", value: organization }
          ],
          order: [{ column: "uid", direction: "asc" }],
          limit: 1
        })
        if (named === undefined) return yield* notFound
        uid = named.uid
      }
      const [record] = yield* providers.find({
        conditions: [{ _tag: "Equals", column: "parent", value: uid }],
        order: [{ column: "name", direction: "asc" }, { column: "uid", direction: "asc" }],
        limit: 1
      })
      return record === undefined ? yield* notFound : yield* fromRecord(record)
    })

  /** The provider `idp_id` names: an identity provider by uid, an organization's (by uid or name), or the server's. */
  const resolve = (idp: string | undefined): Effect.Effect<Provider, ArborError> => {
    if (idp === undefined || idp === "") return own
    if (Uid.isUid(idp) && Uid.parentOrNull(idp) !== null) {
      return Effect.flatMap(
        providers.get(idp),
        (found): Effect.Effect<Provider, ArborError> =>
          Option.isSome(found)
            ? fromRecord(found.value)
            : Effect.fail(new NotFound({ resourceType: "identity provider", uid: idp }))
      )
    }
    return ofOrganization(idp)
  }

  return { resolve }
})
