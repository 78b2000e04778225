import * as Effect from "effect/Effect"
import type { Uid } from "../src/engine/Uid.js"
import { Groups, Identities, Principal, Role, RoleBindings } from "../src/index.js"

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
