import { CompiledSchema } from "@arbor/schema-compiler"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import {
  AccountAssociation,
  Advisory,
  Arbor,
  Group,
  GroupInvite,
  Identity,
  IdentityProvider,
  Repo,
  Repository,
  Role,
  RoleBinding,
  Store,
  Tag
} from "../src/index.js"
import { Samples } from "../src/testing/index.js"

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

describe("Repository", () => {
  it.effect("decodes and encodes every stored kind exactly as its schema does, refusing the same corrupt values", () =>
    Effect.gen(function*() {
      yield* Samples.everyKind
      const store = yield* Store.Store
      for (const [table, schema] of schemas) {
        const repository = yield* Repository.make(table, schema)
        const rows = yield* store.find(table, { order: [{ column: "uid", direction: "asc" }] })
        assert.isAbove(rows.length, 0, table.name)
        const general = Schema.decodeUnknownEither(Schema.Array(schema))
        let rejected = 0
        for (const batch of [rows, ...rows.flatMap((row) => Samples.corruptions(row)).map((row) => [row])]) {
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
        // Writes encode with the compiled encoder: the decoded values, and broken copies of them, encode as Schema's.
        const encoder = CompiledSchema.encoder(schema)!
        const encodeGeneral = Schema.encodeEither(schema)
        for (const value of Either.getOrThrow(yield* Effect.either(repository.decode(rows)))) {
          const Class = value.constructor as new(fields: object, trusted: boolean) => object
          for (const each of [value, ...Samples.corruptions(value).map((fields) => new Class(fields, true))]) {
            const expected = encodeGeneral(each)
            const actual = encoder(each)
            if (Either.isLeft(expected)) assert.strictEqual(actual, CompiledSchema.failed, table.name)
            else if (actual !== CompiledSchema.failed) assert.deepStrictEqual(actual, expected.right, table.name)
          }
        }
      }
    }).pipe(Effect.provide(Arbor.layerMemory)))
})
