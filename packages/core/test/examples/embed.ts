import { Arbor, Groups, Identities, Principal, Role, RoleBindings } from "@arbor/core"
import { Effect } from "effect"

const program = Effect.gen(function*() {
  const groups = yield* Groups.Groups
  const org = yield* groups.createRoot(Principal.system, { name: "acme" })
  const team = yield* groups.create(Principal.system, org.uid, { name: "platform" })
  const deployer = yield* (yield* Identities.Identities).create(Principal.system, org.uid, {
    name: "deployer",
    claimMatch: { issuer: "https://token.actions.githubusercontent.com", subject: "repo:acme/app:ref:refs/heads/main" }
  })
  const viewer = Role.builtInByName("viewer")!.uid
  yield* (yield* RoleBindings.RoleBindings).create(Principal.system, team.uid, {
    identityUid: deployer.uid,
    roleUid: viewer
  })
  const visible = yield* groups.list(Principal.identity(deployer.uid), { pageSize: 10 })
  return visible.items.map((group) => group.name) // ["platform"]: the binding reaches the team, not the org
})

export const names = Effect.runPromise(program.pipe(Effect.provide(Arbor.layerMemory)))
