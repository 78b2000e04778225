import { Arbor } from "@arbor/core"
import * as Fixture from "@arbor/core/testing/Fixture"
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
const fixture = `
organizations:
  acme:
    folders: { prod: {}, staging: {} }
    roles: { deployer: [repo.create, repo.update, repo.list] }
    identities:
      ci: { issuer: https://token.actions.githubusercontent.com, subject: "repo:acme/app:ref:refs/heads/main" }
    bindings:
      - { identity: ci, role: deployer, group: prod }
`
const t = async (name, f, n) => { for (let i = 0; i < 20; i++) await f(); const a = performance.now(); for (let i = 0; i < n; i++) await f(); console.log(name, ((performance.now() - a) / n).toFixed(2), "ms") }
const mode = process.argv[2] ?? "both"
if (mode !== "fixture") await t("empty engine", async () => { const r = ManagedRuntime.make(Arbor.layerMemory); await r.runPromise(Effect.void); await r.dispose() }, 200)
if (mode !== "empty") await t("fixture", async () => (await Fixture.start(fixture)).dispose(), 200)
