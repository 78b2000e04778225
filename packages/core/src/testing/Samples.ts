/**
 * Samples for tests that must cover every kind of resource: one of each, created through the engine's services
 * with optional fields both set and absent (`everyKind`), and broken copies of any value (`corruptions`).
 */
import * as Effect from "effect/Effect"
import * as AccountAssociations from "../iam/AccountAssociations.js"
import * as GroupInvites from "../iam/GroupInvites.js"
import * as Groups from "../iam/Groups.js"
import * as Identities from "../iam/Identities.js"
import * as IdentityProviders from "../iam/IdentityProviders.js"
import * as Principal from "../iam/Principal.js"
import * as Role from "../iam/Role.js"
import * as RoleBindings from "../iam/RoleBindings.js"
import * as Roles from "../iam/Roles.js"
import * as Advisories from "../registry/Advisories.js"
import * as Repos from "../registry/Repos.js"
import * as Tags from "../registry/Tags.js"

const advisoryDocument = `schema-version: 2.0.2

package:
  name: tool

advisories:
  - id: CGA-2222-3333-4444
    aliases:
      - CVE-2024-0001
    events:
      - timestamp: 2024-01-01T00:00:00Z
        type: fixed
        data:
          fixed-version: 1.2.3-r1
`

/** One of every kind of stored resource, with optional fields both set and absent. */
export const everyKind = Effect.gen(function*() {
  const groups = yield* Groups.Groups
  const org = yield* groups.createRoot(Principal.system, { name: "acme" })
  const team = yield* groups.create(Principal.system, org.uid, { name: "team" })
  const identities = yield* Identities.Identities
  const viewer = yield* identities.create(Principal.system, team.uid, {
    name: "viewer",
    claimMatch: { issuer: "https://issuer.example.com", subject: "viewer" }
  })
  yield* (yield* RoleBindings.RoleBindings).create(Principal.system, team.uid, {
    identityUid: viewer.uid,
    roleUid: Role.builtInByName("viewer")!.uid
  })
  yield* identities.create(Principal.system, org.uid, {
    name: "patterns",
    description: "a described identity",
    claimMatch: { issuerPattern: "https://.*[.]example[.]com", subjectPattern: "repo:acme/.*", claims: { aud: "x" } }
  })
  yield* identities.create(Principal.system, team.uid, {
    name: "plain",
    claimMatch: { issuer: "https://issuer.example.com", subject: "plain" }
  })
  const role = yield* (yield* Roles.Roles).create(Principal.system, org.uid, {
    name: "custom",
    capabilities: ["groups.list", "repo.list"]
  })
  yield* (yield* IdentityProviders.IdentityProviders).create(Principal.system, org.uid, {
    name: "sso",
    defaultRole: role.uid,
    oidc: { issuer: "https://login.example.com", clientId: "arbor", clientSecret: "s", additionalScopes: ["email"] }
  })
  yield* (yield* AccountAssociations.AccountAssociations).create(Principal.system, team.uid, {
    name: "clouds",
    amazon: { account: "123456789012" },
    azure: {
      tenantId: "8c3dad1d-b6bc-4f8b-939b-8263372eced6",
      clientIds: { ci: "4e3c9f4d-1111-2222-3333-444455556666" }
    }
  })
  yield* (yield* GroupInvites.GroupInvites).create(Principal.system, team.uid, { roleUid: role.uid })
  const repo = yield* (yield* Repos.Repos).upsert(Principal.system, org.uid, {
    name: "tool",
    catalogTier: "APPLICATION"
  })
  yield* (yield* Tags.Tags).upsert(Principal.system, repo.uid, { name: "latest", digest: `sha256:${"a".repeat(64)}` })
  yield* (yield* Advisories.Advisories).importDocuments(Principal.system, org.uid, [
    { source: "tool.advisories.yaml", text: advisoryDocument }
  ])
})

/** Each of its values with one field replaced by a value of another type, or removed. */
export const corruptions = <A extends object>(value: A): ReadonlyArray<A> =>
  Object.keys(value).flatMap((column) => [
    ...[null, 0, -1.5, "", "x", true, [], {}, [1], { a: 1 }].map((wrong) => ({ ...value, [column]: wrong })),
    Object.fromEntries(Object.entries(value).filter(([c]) => c !== column)) as A
  ])
