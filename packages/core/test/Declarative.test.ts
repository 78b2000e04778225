import { assert, describe, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as fc from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import { parse } from "yaml"
import * as Egress from "../src/engine/internal/egress.js"
import {
  Arbor,
  Declarative,
  Groups,
  Identities,
  MemoryStore,
  OrganizationDocument,
  Principal,
  Role,
  RoleBindings,
  Secrets,
  Store
} from "../src/index.js"
import * as Refusal from "../src/testing/Refusal.js"
import { principalWith } from "./fixtures.js"

const withArbor = <A, E>(effect: Effect.Effect<A, E, Arbor.Services>) => Effect.provide(effect, Arbor.layerMemory)

const acme = parse(`
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

const describeChanges = (plan: Declarative.Plan) =>
  plan.changes.map((c) => `${c.action} ${c.kind} ${c.path}${c.detail === undefined ? "" : `: ${c.detail}`}`)

const errorOf = (e: unknown) => ({
  tag: (e as { _tag: string })._tag,
  fields: (e as { violations?: ReadonlyArray<{ field?: string; type?: string }> }).violations?.map((v) =>
    v.field ?? v.type
  )
})

describe("Declarative", () => {
  it.effect("applies a document, exports it in a stable order, and an export applied elsewhere exports the same", () =>
    Effect.gen(function*() {
      const exported = yield* withArbor(Effect.gen(function*() {
        const declarative = yield* Declarative.Declarative
        const plan = yield* declarative.apply(Principal.system, acme)
        assert.deepStrictEqual(describeChanges(plan), [
          "create organization acme",
          "create folder acme/prod",
          "create folder acme/prod/web",
          "create folder acme/staging",
          "create role acme/auditor",
          "create role acme/deployer",
          "create identity acme/prod/ci",
          "create identity acme/staging/watcher",
          "create binding acme/prod/ci → deployer at acme/prod",
          "create binding acme/staging/watcher → viewer at acme"
        ])
        // Applied twice: nothing to do.
        assert.deepStrictEqual((yield* declarative.plan(Principal.system, acme)).changes, [])
        return yield* declarative.exportOrganization(Principal.system, "acme")
      }))
      assert.deepStrictEqual(exported.organizations.acme!.roles, {
        auditor: { description: "reads the trail", capabilities: ["subscriptions.list"] },
        deployer: ["repo.create", "repo.list", "repo.update"]
      })
      const again = yield* withArbor(Effect.gen(function*() {
        const declarative = yield* Declarative.Declarative
        yield* declarative.apply(Principal.system, exported)
        return yield* declarative.exportOrganization(Principal.system, "acme")
      }))
      assert.strictEqual(JSON.stringify(again), JSON.stringify(exported))
    }))

  it.effect("a change made by hand shows as drift; prune deletes what the document leaves out, only with prune", () =>
    withArbor(Effect.gen(function*() {
      const declarative = yield* Declarative.Declarative
      yield* declarative.apply(Principal.system, acme)
      const groups = yield* Groups.Groups
      const [org] = (yield* groups.list(Principal.system, { inRoot: true, name: "acme" })).items
      yield* groups.create(Principal.system, org!.uid, { name: "scratch" })
      const roles = { ...acme.organizations.acme.roles, deployer: ["repo.create", "repo.delete"] }
      const changed = { organizations: { acme: { ...acme.organizations.acme, roles } } }
      assert.deepStrictEqual(describeChanges(yield* declarative.plan(Principal.system, changed)), [
        "update role acme/deployer: +repo.delete -repo.list -repo.update"
      ])
      assert.deepStrictEqual(describeChanges(yield* declarative.plan(Principal.system, changed, { prune: true })), [
        "update role acme/deployer: +repo.delete -repo.list -repo.update",
        "delete folder acme/scratch"
      ])
      // Applied with the etag of a plan made before a change by hand: refused, nothing applied.
      const reviewed = yield* declarative.plan(Principal.system, changed, { prune: true })
      yield* groups.create(Principal.system, org!.uid, { name: "late" })
      const stale = yield* Refusal.of(
        declarative.apply(Principal.system, changed, { prune: true, etag: reviewed.etag })
      )
      assert.deepStrictEqual([stale._tag, "reason" in stale && stale.reason], ["Aborted", "ETAG_MISMATCH"])
      const current = yield* declarative.plan(Principal.system, changed, { prune: true })
      assert.notStrictEqual(current.etag, reviewed.etag)
      yield* declarative.apply(Principal.system, changed, { prune: true, etag: current.etag })
      assert.deepStrictEqual((yield* declarative.plan(Principal.system, changed, { prune: true })).changes, [])
    })))

  it.effect("identity providers and their group mappings: secrets by reference only, compared, never exported", () =>
    Effect.gen(function*() {
      const document = parse(`
organizations:
  acme:
    folders: { prod: {}, staging: {} }
    roles: { deployer: [repo.create, repo.list] }
    identityProviders:
      okta:
        description: people
        defaultRole: viewer
        issuer: https://acme.okta.example.com
        clientId: arbor
        secretFrom: { env: ARBOR_IDP_ACME__OKTA_CLIENT_SECRET }
        groupsClaim: groups
        mappings:
          - { externalGroup: admins, role: owner }
          - { externalGroup: deployers, role: deployer, scope: prod }
      prod/github: { defaultRole: viewer, issuer: https://github.example.com, clientId: gh, pkce: true }
`)
      const okta = document.organizations.acme.identityProviders.okta
      let secret = "s3cret"
      const secretOf = (from: OrganizationDocument.SecretFrom) =>
        OrganizationDocument.sourceOf(from) === "env:ARBOR_IDP_ACME__OKTA_CLIENT_SECRET"
          ? Effect.succeed(secret)
          : Effect.die(`asked for ${OrganizationDocument.sourceOf(from)}`)
      const exported = yield* withArbor(Effect.gen(function*() {
        const declarative = yield* Declarative.Declarative
        const plan = yield* declarative.apply(Principal.system, document, { secretOf })
        assert.deepStrictEqual(describeChanges(plan).filter((c) => /identityProvider|mapping/.test(c)), [
          "create identityProvider acme/okta: clientSecret from env ARBOR_IDP_ACME__OKTA_CLIENT_SECRET",
          "create mapping acme/okta: admins → owner at acme",
          "create mapping acme/okta: deployers → deployer at acme/prod",
          "create identityProvider acme/prod/github"
        ])
        // The same secret: nothing to do; another: the secret changes, and only it.
        assert.deepStrictEqual((yield* declarative.plan(Principal.system, document, { secretOf })).changes, [])
        secret = "rotated"
        assert.deepStrictEqual(describeChanges(yield* declarative.plan(Principal.system, document, { secretOf })), [
          "update identityProvider acme/okta: clientSecret from env ARBOR_IDP_ACME__OKTA_CLIENT_SECRET"
        ])
        yield* declarative.apply(Principal.system, document, { secretOf })
        assert.deepStrictEqual((yield* declarative.plan(Principal.system, document, { secretOf })).changes, [])
        // A reviewer who may only read cannot compare the secret: its plan shows what it can see, not a refusal.
        const [org] = (yield* (yield* Groups.Groups).list(Principal.system, { inRoot: true, name: "acme" })).items
        const reviewer = yield* principalWith(org!.uid, "reviewer", "viewer")
        assert.deepStrictEqual((yield* declarative.plan(reviewer, document, { secretOf })).changes, [])
        // A mapping the document leaves out goes only with prune.
        const fewer = {
          organizations: {
            acme: {
              ...document.organizations.acme,
              identityProviders: {
                ...document.organizations.acme.identityProviders,
                okta: { ...okta, mappings: okta.mappings.slice(0, 1) }
              }
            }
          }
        }
        assert.deepStrictEqual((yield* declarative.plan(Principal.system, fewer, { secretOf })).changes, [])
        assert.deepStrictEqual(
          describeChanges(yield* declarative.plan(Principal.system, fewer, { secretOf, prune: true })).filter((c) =>
            c.includes("mapping")
          ),
          ["delete mapping acme/okta: deployers → deployer at acme/prod"]
        )
        return yield* declarative.exportOrganization(Principal.system, "acme")
      }))
      // The secret is exported as the variable to supply it in, never itself.
      assert.deepStrictEqual(exported.organizations.acme!.identityProviders, {
        okta: {
          description: "people",
          defaultRole: "viewer",
          issuer: "https://acme.okta.example.com",
          clientId: "arbor",
          secretFrom: { env: "ARBOR_IDP_ACME__OKTA_CLIENT_SECRET" },
          groupsClaim: "groups",
          mappings: [
            { externalGroup: "admins", role: "owner" },
            { externalGroup: "deployers", role: "deployer", scope: "prod" }
          ]
        },
        "prod/github": { defaultRole: "viewer", issuer: "https://github.example.com", clientId: "gh", pkce: true }
      })
      assert.notInclude(JSON.stringify(exported), "rotated")
      const again = yield* withArbor(Effect.gen(function*() {
        const declarative = yield* Declarative.Declarative
        yield* declarative.apply(Principal.system, exported, { secretOf })
        return yield* declarative.exportOrganization(Principal.system, "acme")
      }))
      assert.strictEqual(JSON.stringify(again), JSON.stringify(exported))

      // Refused, with nothing applied: a secret written inline, one with no reader to read it, a mapping's scope
      // outside its provider's folder.
      const refusals = yield* withArbor(Effect.gen(function*() {
        const declarative = yield* Declarative.Declarative
        const withOkta = (provider: object, options: Declarative.Options = { secretOf }) =>
          Refusal.of(declarative.apply(Principal.system, {
            organizations: { acme: { ...document.organizations.acme, identityProviders: { okta: provider } } }
          }, options))
        const inline = yield* withOkta({ ...okta, secretFrom: undefined, clientSecret: "s3cret" })
        const unread = yield* withOkta(okta, {})
        const outside = yield* withOkta({
          ...okta,
          group: "prod",
          mappings: [{ externalGroup: "x", role: "viewer", scope: "staging" }]
        })
        const groups = yield* Groups.Groups
        return {
          errors: [inline, unread, outside].map(errorOf),
          inlineSays: "violations" in inline ? inline.violations[0]?.description : undefined,
          left: (yield* groups.list(Principal.system, { inRoot: true })).items.length
        }
      }))
      assert.deepStrictEqual(refusals.errors, [
        { tag: "InvalidArgument", fields: ["organizations.acme.identityProviders.okta.clientSecret"] },
        { tag: "InvalidArgument", fields: ["organizations.acme.identityProviders.okta.secretFrom"] },
        { tag: "InvalidArgument", fields: ["organizations.acme.identityProviders.okta.mappings[0].scope"] }
      ])
      assert.include(refusals.inlineSays, "secretFrom")
      assert.strictEqual(refusals.left, 0)
    }))

  it("a secret's variable is one provider's alone: made from its organization and path, it spells them back", () => {
    // The collisions of issue 54: a provider named prod-okta beside a folder prod's okta; acme-prod's okta beside
    // acme's prod/okta.
    const { secretVariable } = OrganizationDocument
    assert.notStrictEqual(secretVariable("t2", "prod-okta"), secretVariable("t2", "prod/okta"))
    assert.notStrictEqual(secretVariable("acme-prod", "okta"), secretVariable("acme", "prod/okta"))
    assert.strictEqual(secretVariable("acme", "prod/okta"), "ARBOR_IDP_ACME__PROD__OKTA_CLIENT_SECRET")
    // Every name reads back as its organization and path: no two map to one variable.
    const code = { H: "-", S: "/", D: ".", W: " ", U: "_" } as Record<string, string>
    const spelled = (variable: string) => {
      assert.match(variable, /^[A-Z0-9_]+$/)
      return variable.slice("ARBOR_IDP_".length, -"_CLIENT_SECRET".length).replace(
        /___([A-Z]+)___|__|_|[A-Z0-9]+/g,
        (run, escaped: string | undefined) =>
          escaped !== undefined
            ? [...escaped].map((c) => code[c]).join("")
            : run === "__"
            ? "/"
            : run === "_"
            ? "-"
            : run.toLowerCase()
      )
    }
    const name = fc.stringMatching(/^[a-z0-9 ._-]{1,8}$/)
    fc.assert(
      fc.property(name, fc.array(name, { minLength: 1, maxLength: 3 }), (organization, path) => {
        assert.strictEqual(
          spelled(secretVariable(organization, path.join("/"))),
          `${organization}/${path.join("/")}`
        )
      }),
      { numRuns: 2_000 }
    )
  })

  it.effect("a document in which two identity providers read one secret is refused, nothing applied", () =>
    withArbor(Effect.gen(function*() {
      const declarative = yield* Declarative.Declarative
      const provider = (secretFrom: OrganizationDocument.SecretFrom) => ({
        defaultRole: "viewer",
        issuer: "https://idp.example.com",
        clientId: "arbor",
        secretFrom
      })
      const secretOf = () => Effect.succeed("s3cret")
      const refused = (document: unknown) => Refusal.of(declarative.apply(Principal.system, document, { secretOf }))
      const sameVariable = yield* refused({
        organizations: {
          t2: {
            folders: { prod: {} },
            identityProviders: {
              "prod-okta": provider({ env: "T2_OKTA" }),
              "prod/okta": provider({ env: "T2_OKTA" })
            }
          }
        }
      })
      // The same file however its path is written, across the organizations of one document.
      const sameFile = yield* refused({
        organizations: {
          acme: { identityProviders: { okta: provider({ file: "secrets/okta" }) } },
          "acme-prod": { identityProviders: { okta: provider({ file: "./secrets//okta" }) } }
        }
      })
      assert.deepStrictEqual([sameVariable, sameFile].map(errorOf), [
        { tag: "InvalidArgument", fields: ["organizations.t2.identityProviders.prod/okta.secretFrom"] },
        { tag: "InvalidArgument", fields: ["organizations.acme-prod.identityProviders.okta.secretFrom"] }
      ])
      assert.include(
        "violations" in sameVariable ? sameVariable.violations[0]?.description : "",
        "organizations.t2.identityProviders.prod-okta.secretFrom"
      )
      assert.strictEqual((yield* (yield* Groups.Groups).list(Principal.system, { inRoot: true })).items.length, 0)
    })))

  it.effect("subscriptions: made, exported, pruned; a sink the engine refuses is named by its place in the document", () =>
    Effect.gen(function*() {
      const document = parse(`
organizations:
  acme:
    folders: { prod: {} }
    subscriptions:
      - { sink: "https://hooks.acme.invalid/audit" }
      - { sink: "https://hooks.acme.invalid/prod", group: prod }
`)
      // The sinks' host resolves to a public address, as a receiver's would.
      const resolver = Layer.succeed(Egress.Resolver, async (host: string) => {
        if (host !== "hooks.acme.invalid") throw new Error(`ENOTFOUND ${host}`)
        return [{ address: "93.184.216.34", family: 4 }]
      })
      const exported = yield* Effect.provide(
        Effect.gen(function*() {
          const declarative = yield* Declarative.Declarative
          const plan = yield* declarative.apply(Principal.system, document)
          assert.deepStrictEqual(describeChanges(plan).filter((c) => c.includes("subscription")), [
            "create subscription acme → https://hooks.acme.invalid/audit",
            "create subscription acme/prod → https://hooks.acme.invalid/prod"
          ])
          assert.deepStrictEqual((yield* declarative.plan(Principal.system, document)).changes, [])
          const one = {
            organizations: {
              acme: {
                ...document.organizations.acme,
                subscriptions: document.organizations.acme.subscriptions.slice(1)
              }
            }
          }
          assert.deepStrictEqual(describeChanges(yield* declarative.plan(Principal.system, one, { prune: true })), [
            "delete subscription acme → https://hooks.acme.invalid/audit"
          ])
          const refused = yield* Refusal.of(declarative.apply(Principal.system, {
            organizations: { acme: { subscriptions: [{ sink: "http://hooks.acme.invalid/plain" }] } }
          }))
          assert.deepStrictEqual(errorOf(refused), {
            tag: "InvalidArgument",
            fields: ["organizations.acme.subscriptions[0].sink"]
          })
          return yield* declarative.exportOrganization(Principal.system, "acme")
        }),
        Arbor.layerMemory.pipe(Layer.provide(resolver))
      )
      assert.deepStrictEqual(exported.organizations.acme!.subscriptions, [
        { sink: "https://hooks.acme.invalid/audit" },
        { sink: "https://hooks.acme.invalid/prod", group: "prod" }
      ])
    }))

  it.effect("a binding's expiry: applied, exported, changed as an update of the same binding", () =>
    withArbor(Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-11-29T00:00:00Z"))
      const declarative = yield* Declarative.Declarative
      const document = parse(`
organizations:
  temp:
    identities:
      contractor: { issuer: https://ci.example.com, subject: contractor }
    bindings:
      - { identity: contractor, role: editor, starts: "2026-11-30T00:00:00Z", expires: "2026-12-01T00:00:00Z" }
`)
      yield* declarative.apply(Principal.system, document)
      assert.deepStrictEqual((yield* declarative.plan(Principal.system, document)).changes, [])
      const exported = yield* declarative.exportOrganization(Principal.system, "temp")
      assert.deepStrictEqual(
        exported.organizations.temp!.bindings!.map((b) => [
          b.identity,
          b.role,
          ...[b.starts, b.expires].map((t) => t === undefined ? undefined : DateTime.formatIso(t))
        ]),
        [["contractor", "editor", "2026-11-30T00:00:00.000Z", "2026-12-01T00:00:00.000Z"]]
      )
      const later = structuredClone(document)
      later.organizations.temp.bindings[0].expires = "2026-12-08T00:00:00Z"
      assert.deepStrictEqual(describeChanges(yield* declarative.apply(Principal.system, later)), [
        "update binding temp/contractor → editor at temp: expires 2026-12-08T00:00:00.000Z"
      ])
      const past = structuredClone(document)
      past.organizations.temp.bindings[0].expires = "2026-11-01T00:00:00Z"
      assert.deepStrictEqual(errorOf(yield* Refusal.of(declarative.apply(Principal.system, past))), {
        tag: "InvalidArgument",
        fields: ["organizations.temp.bindings[0].expires.expireTime"]
      })
    })))

  it.effect("a binding's condition: applied, exported, changed as an update; a wrong one named by its place", () =>
    withArbor(Effect.gen(function*() {
      const declarative = yield* Declarative.Declarative
      const document = parse(`
organizations:
  cond:
    folders: { dev: {} }
    identities:
      contractor: { issuer: https://ci.example.com, subject: contractor }
    bindings:
      - identity: contractor
        role: editor
        condition: { expression: 'resource.path.startsWith("cond/dev")', title: development }
`)
      yield* declarative.apply(Principal.system, document)
      assert.deepStrictEqual((yield* declarative.plan(Principal.system, document)).changes, [])
      const exported = yield* declarative.exportOrganization(Principal.system, "cond")
      assert.deepInclude(exported.organizations.cond!.bindings![0]!.condition, {
        expression: `resource.path.startsWith("cond/dev")`,
        title: "development"
      })
      const widened = structuredClone(document)
      delete widened.organizations.cond.bindings[0].condition
      assert.deepStrictEqual(describeChanges(yield* declarative.apply(Principal.system, widened)), [
        "update binding cond/contractor → editor at cond: no condition"
      ])
      const wrong = structuredClone(document)
      wrong.organizations.cond.bindings[0].condition.expression = "resource.pth == 1"
      assert.deepInclude(errorOf(yield* Refusal.of(declarative.apply(Principal.system, wrong))), {
        tag: "InvalidArgument",
        fields: ["organizations.cond.bindings[0].condition.expression"]
      })
    })))

  it.effect("a folder name that is no name is refused at its place in the document, in words, nothing made", () =>
    withArbor(Effect.gen(function*() {
      const declarative = yield* Declarative.Declarative
      const document = parse(`
organizations:
  named:
    folders: { prod: { folders: { "Web App": {} } } }
`)
      const refused = errorOf(yield* Refusal.of(declarative.apply(Principal.system, document)))
      assert.deepInclude(refused, {
        tag: "InvalidArgument",
        fields: ["organizations.named.folders.prod.folders[\"Web App\"]"]
      })
      const said = yield* Refusal.of(declarative.plan(Principal.system, document))
      assert.notInclude(said.message, "^[a-z0-9", "the rule in words, not a pattern")
      assert.include(said.message, "lowercase letters, digits, spaces")
    })))

  it.effect("the decision vocabulary: applied, exported, compared as a whole; a wrong word named by its place", () =>
    withArbor(Effect.gen(function*() {
      const declarative = yield* Declarative.Declarative
      const document = parse(`
organizations:
  todo:
    folders: { todos: {} }
    decisions:
      subjects: { user: { by: subject, issuer: "https://todo-idp.invalid" } }
      actions: { can_read_todos: repo.list, can_create_todo: CAP_REPO_CREATE }
      resources: { todo: { folder: todos }, user: {} }
`)
      const plan = yield* declarative.apply(Principal.system, document)
      assert.include(describeChanges(plan), "create decisions todo: subjects, actions, resources")
      assert.deepStrictEqual((yield* declarative.plan(Principal.system, document)).changes, [])
      const exported = yield* declarative.exportOrganization(Principal.system, "todo")
      assert.deepStrictEqual(exported.organizations.todo!.decisions, {
        subjects: { user: { by: "subject", issuer: "https://todo-idp.invalid" } },
        actions: { can_read_todos: "repo.list", can_create_todo: "repo.create" },
        resources: { todo: { folder: "todos" }, user: {} }
      })
      const changed = structuredClone(document)
      changed.organizations.todo.decisions.actions.can_delete_todo = "repo.delete"
      assert.deepStrictEqual(describeChanges(yield* declarative.plan(Principal.system, changed)), [
        "update decisions todo: actions"
      ])
      // Left out, it is left alone; with prune, emptied.
      const without = { organizations: { todo: { folders: { todos: {} } } } }
      assert.deepStrictEqual((yield* declarative.plan(Principal.system, without)).changes, [])
      assert.deepStrictEqual(describeChanges(yield* declarative.plan(Principal.system, without, { prune: true })), [
        "delete decisions todo: subjects, actions, resources"
      ])
      const wrong = structuredClone(document)
      wrong.organizations.todo.decisions.actions.can_fly = "wings.flap"
      assert.deepStrictEqual(errorOf(yield* Refusal.of(declarative.apply(Principal.system, wrong))), {
        tag: "InvalidArgument",
        fields: ["organizations.todo.decisions.actions.can_fly"]
      })
    })))

  it.effect("bad documents name the path of what is wrong, and nothing is applied", () =>
    withArbor(Effect.gen(function*() {
      const declarative = yield* Declarative.Declarative
      const org = acme.organizations.acme
      const bad = (organization: object) => ({ organizations: { acme: { ...org, ...organization } } })
      const cases = [
        [bad({ colour: "red" }), "organizations.acme.colour"],
        [
          bad({ folders: { prod: { folders: { web: { owner: "x" } } } } }),
          "organizations.acme.folders.prod.folders.web.owner"
        ],
        [bad({ roles: { deployer: ["repo.fly"] } }), "organizations.acme.roles.deployer[0]"],
        [
          bad({ bindings: [org.bindings[0], { identity: "prod/ci", role: "pilot", group: "prod" }] }),
          "organizations.acme.bindings[1].role"
        ],
        [bad({ bindings: [{ identity: "nobody", role: "viewer" }] }), "organizations.acme.bindings[0].identity"],
        [
          bad({ bindings: [{ identity: "prod/ci", role: "viewer", group: "qa" }] }),
          "organizations.acme.bindings[0].group"
        ],
        [
          bad({ identities: { "qa/ci": { issuer: "https://issuer.example.com", subject: "ci" } } }),
          "organizations.acme.identities.qa/ci"
        ],
        // Refused by the engine as it makes the identity (a batch of them), named where the document wrote it.
        [
          bad({
            identities: {
              ...org.identities,
              "staging/deploy": { issuer: "http://issuer.example.com", subject: "deploy" }
            }
          }),
          "organizations.acme.identities.staging/deploy.claimMatch.issuer"
        ]
      ] as const
      for (const [document, field] of cases) {
        const error = yield* Refusal.of(declarative.apply(Principal.system, document))
        assert.deepStrictEqual(errorOf(error), { tag: "InvalidArgument", fields: [field] }, field)
      }
      const groups = yield* Groups.Groups
      assert.strictEqual((yield* groups.list(Principal.system, { inRoot: true, name: "acme" })).items.length, 0)
    })))

  it.effect("each change is made as the caller: one it may not make refuses the whole apply, nothing left behind", () =>
    withArbor(Effect.gen(function*() {
      const declarative = yield* Declarative.Declarative
      yield* declarative.apply(Principal.system, { organizations: { acme: { folders: { prod: {} } } } })
      const groups = yield* Groups.Groups
      const [org] = (yield* groups.list(Principal.system, { inRoot: true, name: "acme" })).items
      // A pull-token creator may make identities and bind the roles it holds: the identity is made, then binding
      // it as owner is refused (no escalation), and the identity goes with the rest.
      const creator = yield* principalWith(org!.uid, "creator", "registry.pull_token_creator")
      const grant = {
        organizations: {
          acme: {
            folders: { prod: {} },
            identities: { bot: { issuer: "https://issuer.example.com", subject: "bot" } },
            bindings: [{ identity: "bot", role: "owner" }]
          }
        }
      }
      assert.deepStrictEqual(describeChanges(yield* declarative.plan(creator, grant)), [
        "create identity acme/bot",
        "create binding acme/bot → owner at acme"
      ])
      const refused = yield* Refusal.of(declarative.apply(creator, grant))
      assert.strictEqual(refused._tag, "PermissionDenied")
      const identities = yield* Identities.Identities
      assert.deepStrictEqual(
        (yield* identities.list(Principal.system, { descendantsOf: org!.uid })).items.map((i) => i.name),
        ["creator"]
      )
    })))

  it.effect("prune never takes away the caller's own owner binding, nor the organization's last owner", () =>
    withArbor(Effect.gen(function*() {
      const declarative = yield* Declarative.Declarative
      yield* declarative.apply(Principal.system, { organizations: { acme: {} } })
      const groups = yield* Groups.Groups
      const [org] = (yield* groups.list(Principal.system, { inRoot: true, name: "acme" })).items
      const owner = yield* principalWith(org!.uid, "owner", "owner")
      const exported = yield* declarative.exportOrganization(owner, "acme")
      const withoutBindings = { organizations: { acme: { ...exported.organizations.acme, bindings: [] } } }
      const own = yield* Refusal.of(declarative.apply(owner, withoutBindings, { prune: true }))
      assert.deepStrictEqual(errorOf(own), { tag: "FailedPrecondition", fields: ["OWN_OWNER_BINDING"] })
      const last = yield* Refusal.of(declarative.apply(Principal.system, withoutBindings, { prune: true }))
      assert.deepStrictEqual(errorOf(last), { tag: "FailedPrecondition", fields: ["LAST_OWNER"] })
      const bindings = yield* RoleBindings.RoleBindings
      const owners = (yield* bindings.list(Principal.system, { childrenOf: org!.uid })).items
        .filter((b) => b.role.uid === Role.builtInByName("owner")!.uid)
      assert.strictEqual(owners.length, 1)
    })))

  it.effect("a store that fails in the middle of an apply leaves nothing of it", () =>
    Effect.gen(function*() {
      // The memory store, failing every insert (of one row or many) from the 7th on once armed: six succeed first.
      let armed = false
      let inserts = 0
      const faulty = Layer.effect(
        Store.Store,
        Effect.map(MemoryStore.MemoryStore, (store): Store.StoreService => ({
          ...store,
          insert: (table, row) =>
            armed && ++inserts >= 7
              ? Effect.fail(new Store.StoreError({ cause: "the disk is full" }))
              : store.insert(table, row),
          insertMany: (table, rows) =>
            armed && ++inserts >= 7
              ? Effect.fail(new Store.StoreError({ cause: "the disk is full" }))
              : store.insertMany(table, rows)
        }))
      ).pipe(Layer.provideMerge(MemoryStore.layer))
      const engine = Arbor.layer.pipe(Layer.provideMerge(faulty), Layer.provide(Secrets.layerEphemeral))
      yield* Effect.gen(function*() {
        const declarative = yield* Declarative.Declarative
        yield* declarative.apply(Principal.system, { organizations: { acme: {} } })
        armed = true
        const failed = yield* Refusal.of(declarative.apply(Principal.system, acme))
        assert.strictEqual(failed._tag, "Internal")
        armed = false
        const exported = yield* declarative.exportOrganization(Principal.system, "acme")
        assert.deepStrictEqual(exported.organizations.acme, {}, "the organization as it was before")
        assert.isAbove(inserts, 6, "the store failed after writes of the apply had succeeded")
      }).pipe(Effect.provide(engine))
    }))
})

describe("OrganizationDocument.jsonSchema", () => {
  it("describes the document for editors: unknown keys refused, folders nested, capabilities in both spellings", () => {
    // As an editor reads it: JSON.
    const schema = JSON.parse(JSON.stringify(OrganizationDocument.jsonSchema()))
    const organization = schema.properties.organizations.additionalProperties
    assert.isFalse(organization.additionalProperties)
    assert.deepStrictEqual(Object.keys(organization.properties).sort(), [
      "bindings",
      "decisions",
      "description",
      "folders",
      "identities",
      "identityProviders",
      "roles",
      "subscriptions"
    ])
    assert.property(schema.$defs, "Folder")
    // A client secret only by where it is read: the provider has no property for the secret itself.
    const provider = organization.properties.identityProviders.additionalProperties
    assert.isFalse(provider.additionalProperties)
    assert.notProperty(provider.properties, "clientSecret")
    assert.property(schema.$defs, "SecretFrom")
    const capabilities = JSON.stringify(organization.properties.roles)
    assert.include(capabilities, "\"repo.create\"")
    assert.include(capabilities, "\"CAP_REPO_CREATE\"")
  })
})
