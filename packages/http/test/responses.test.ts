/**
 * Responses are encoded by each endpoint's success schema compiled (`CompiledSchema`); the compiled encoders must
 * give exactly what `Schema`'s general encoder gives, on every resource of both surfaces, and refuse what it refuses.
 */
import * as Wire from "@arbor/api/Wire"
import type { Lists } from "@arbor/core"
import {
  AccountAssociations,
  Advisories,
  Arbor,
  GroupInvites,
  Groups,
  Identities,
  IdentityProviders,
  Principal,
  RoleBindings,
  Roles,
  Tags
} from "@arbor/core"
import { Repos } from "@arbor/core"
import { Samples } from "@arbor/core/testing"
import { CompiledSchema } from "@arbor/schema-compiler"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"

type Listing = {
  readonly list: (p: Principal.Principal, o: Lists.ListOptions) => Effect.Effect<Lists.Page<object>, unknown>
}

/** The same value with one field replaced, keeping its class (so only that field can make encoding fail). */
const corrupt = (value: object): ReadonlyArray<object> =>
  Samples.corruptions(value).map((fields) => {
    const Class = value.constructor as new(fields: object, trusted: boolean) => object
    return Class === Object ? fields : new Class(fields, true)
  })

describe("compiled response encoders", () => {
  it.effect("encode every resource on both surfaces, and list envelopes, exactly as Schema does", () =>
    Effect.gen(function*() {
      yield* Samples.everyKind
      const kinds: ReadonlyArray<readonly [Listing, Wire.Resource<any, any, any>]> = [
        [yield* Groups.Groups, Wire.Group],
        [yield* Identities.Identities, Wire.Identity],
        [yield* Roles.Roles, Wire.Role],
        [yield* RoleBindings.RoleBindings, Wire.RoleBinding],
        [yield* IdentityProviders.IdentityProviders, Wire.IdentityProvider],
        [yield* AccountAssociations.AccountAssociations, Wire.AccountAssociation],
        [yield* GroupInvites.GroupInvites, Wire.GroupInvite],
        [yield* Repos.Repos, Wire.Repo],
        [yield* Tags.Tags, Wire.Tag],
        [yield* Advisories.Advisories, Wire.Advisory]
      ]
      let compared = 0
      let refused = 0
      for (const [service, resource] of kinds) {
        const page = yield* service.list(Principal.system, { pageSize: 100 })
        assert.isAbove(page.items.length, 0)
        const schemas: ReadonlyArray<readonly [Schema.Schema<any, any>, ReadonlyArray<unknown>]> = [
          [resource.v2, page.items.flatMap((item) => [item, ...corrupt(item)])],
          [resource.v1, page.items],
          [Wire.listEnvelope("items", resource.v2), [{ ...page, items: page.items }]],
          [Wire.itemsEnvelope(resource.v1), [{ items: page.items }]]
        ]
        for (const [schema, values] of schemas) {
          const compiled = CompiledSchema.encoder(schema)
          assert.isDefined(compiled)
          const general = Schema.encodeEither(schema)
          for (const value of values) {
            const expected = general(value)
            const actual = compiled!(value)
            if (Either.isLeft(expected)) {
              refused++
              assert.strictEqual(actual, CompiledSchema.failed, JSON.stringify(value))
            } else if (actual !== CompiledSchema.failed) {
              compared++
              assert.deepStrictEqual(actual, expected.right)
            }
          }
        }
      }
      assert.isAbove(compared, 100)
      assert.isAbove(refused, 100)
    }).pipe(Effect.provide(Arbor.layerMemory)))
})
