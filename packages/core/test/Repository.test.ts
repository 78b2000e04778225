import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import {
  AccountAssociation,
  AccountAssociations,
  Advisories,
  Advisory,
  Arbor,
  Group,
  GroupInvite,
  GroupInvites,
  Identities,
  Identity,
  IdentityProvider,
  IdentityProviders,
  Principal,
  Repo,
  Repos,
  Repository,
  Role,
  RoleBinding,
  Roles,
  Store,
  Tag,
  Tags
} from "../src/index.js"
import { claimMatch, folder, organization, principalWith } from "./fixtures.js"

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
const populate = Effect.gen(function*() {
  const org = yield* organization("acme")
  const team = yield* folder(org.uid, "team")
  yield* principalWith(team.uid, "viewer", "viewer")
  const identities = yield* Identities.Identities
  yield* identities.create(Principal.system, org.uid, {
    name: "patterns",
    description: "a described identity",
    claimMatch: { issuerPattern: "https://.*[.]example[.]com", subjectPattern: "repo:acme/.*", claims: { aud: "x" } }
  })
  yield* identities.create(Principal.system, team.uid, { name: "plain", claimMatch: claimMatch("plain") })
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

const schemas: ReadonlyArray<readonly [Store.Table, Schema.Schema<any, any>]> = [
  [Group.table, Group.Group],
  [Identity.table, Identity.Identity],
  [Role.table, Role.Role],
  [RoleBinding.table, RoleBinding.Record],
  [IdentityProvider.table, IdentityProvider.Record],
  [AccountAssociation.table, AccountAssociation.AccountAssociation],
  [GroupInvite.table, GroupInvite.Record],
  [Repo.table, Repo.Repo],
  [Tag.table, Tag.Tag],
  [Advisory.table, Advisory.Record]
]

/** Each row with one column replaced by a value of another type, or removed. */
const corruptions = (row: Store.Row): ReadonlyArray<Store.Row> =>
  Object.keys(row).flatMap((column) => [
    ...[null, 0, -1.5, "", "x", true, [], {}, [1], { a: 1 }].map((value) => ({ ...row, [column]: value })),
    Object.fromEntries(Object.entries(row).filter(([c]) => c !== column)) as Store.Row
  ])

describe("Repository", () => {
  it.effect("decodes every stored kind exactly as its schema does, rejecting the same corrupt rows", () =>
    Effect.gen(function*() {
      yield* populate
      const store = yield* Store.Store
      for (const [table, schema] of schemas) {
        const repository = yield* Repository.make(table, schema)
        const rows = yield* store.find(table, { order: [{ column: "uid", direction: "asc" }] })
        assert.isAbove(rows.length, 0, table.name)
        const general = Schema.decodeUnknownEither(Schema.Array(schema))
        let rejected = 0
        for (const batch of [rows, ...rows.flatMap(corruptions).map((row) => [row])]) {
          const expected = general(batch)
          const decoded = yield* Effect.either(repository.decode(batch))
          if (Either.isLeft(expected)) {
            rejected++
            assert.isTrue(Either.isLeft(decoded), `${table.name}: accepted ${JSON.stringify(batch)}`)
            assert.strictEqual(Either.isLeft(decoded) && decoded.left.reason, "CORRUPT_ROW")
          } else {
            assert.isTrue(Either.isRight(decoded), `${table.name}: refused ${JSON.stringify(batch)}`)
            assert.deepStrictEqual(Either.getOrThrow(decoded), expected.right, table.name)
          }
        }
        assert.isAbove(rejected, 0, table.name)
      }
    }).pipe(Effect.provide(Arbor.layerMemory)))
})
