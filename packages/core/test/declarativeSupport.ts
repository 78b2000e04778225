/** What the tests of IAM as code share (`Declarative*.test.ts`): an engine in memory, a document, a plan in words. */
import * as Effect from "effect/Effect"
import { parse } from "yaml"
import type { Declarative } from "../src/index.js"
import { Arbor } from "../src/index.js"

export const withArbor = <A, E>(effect: Effect.Effect<A, E, Arbor.Services>) =>
  Effect.provide(effect, Arbor.layerMemory)

export const acme = parse(`
organizations:
  acme:
    description: Acme's platform
    folders:
      prod: { description: production, folders: { web: {} } }
      staging: {}
    roles:
      deployer: [repo.create, repo.update, CAP_REPO_LIST]
      auditor: { description: reads the trail, capabilities: [subscriptions.list] }
    identities:
      prod/ci: { issuer: https://token.actions.githubusercontent.com, subject: "repo:acme/app:ref:refs/heads/main" }
      watcher:
        group: staging
        claimMatch: { issuer: https://gitlab.example.com, subjectPattern: "project_path:acme/.+" }
    bindings:
      - { identity: prod/ci, role: deployer, group: prod }
      - { identity: staging/watcher, role: viewer }
`)

export const describeChanges = (plan: Declarative.Plan) =>
  plan.changes.map((c) => `${c.action} ${c.kind} ${c.path}${c.detail === undefined ? "" : `: ${c.detail}`}`)

export const errorOf = (e: unknown) => ({
  tag: (e as { _tag: string })._tag,
  fields: (e as { violations?: ReadonlyArray<{ field?: string; type?: string }> }).violations?.map((v) =>
    v.field ?? v.type
  )
})
