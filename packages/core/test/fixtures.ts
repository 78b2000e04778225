import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { Uid } from "../src/engine/Uid.js"
import { Arbor, Groups, Identities, MemoryStore, Principal, Role, RoleBindings, Secrets, Store } from "../src/index.js"

/** A claim match that any test identity can use. */
export const claimMatch = (subject: string) => ({ issuer: "https://issuer.example.com", subject })

/** Creates an organization as the system principal. */
export const organization = (name: string) =>
  Effect.flatMap(Groups.Groups, (groups) => groups.createRoot(Principal.system, { name }))

/** Creates a folder below `parent` as the system principal. */
export const folder = (parent: string, name: string) =>
  Effect.flatMap(Groups.Groups, (groups) => groups.create(Principal.system, parent, { name }))

/** Creates an identity in `group` bound to built-in role `role` at each of `at`, and returns its principal. */
export const principalWith = (group: string, name: string, role: string, at: ReadonlyArray<string> = [group]) =>
  Effect.gen(function*() {
    const identity = yield* (yield* Identities.Identities).create(Principal.system, group, {
      name,
      claimMatch: claimMatch(name)
    })
    const roleUid = Role.builtInByName(role)!.uid
    for (const g of at) {
      yield* (yield* RoleBindings.RoleBindings).create(Principal.system, g, { identityUid: identity.uid, roleUid })
    }
    return Object.assign(Principal.identity(identity.uid), { identityUid: identity.uid as Uid })
  })

/**
 * An in-memory engine whose store is the memory store with `overrides` of its operations, given the store itself: a
 * disk that fills, a connection that drops, as a test arms them.
 */
export const engineOver = (overrides: (store: Store.StoreService) => Partial<Store.StoreService>) =>
  Arbor.layer.pipe(
    Layer.provideMerge(
      Layer.effect(
        Store.Store,
        Effect.map(MemoryStore.MemoryStore, (store): Store.StoreService => ({ ...store, ...overrides(store) }))
      ).pipe(Layer.provideMerge(MemoryStore.layer))
    ),
    Layer.provide(Secrets.layerEphemeral)
  )

/** A store's failure as a connection lost: unavailable, worth a retry. */
export const connectionLost = () => Effect.fail(new Store.StoreError({ cause: "connection reset", unavailable: true }))
