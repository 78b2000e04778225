/**
 * IAM as code (`Declarative`), held to the engine's rules: bindings' windows and conditions, subscriptions, names and
 * words refused at their place in the document, changes made as the caller, prune that keeps owners, a store that
 * fails midway; and the document's JSON Schema.
 */
import { assert, describe, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import { parse } from "yaml"
import * as Egress from "../src/engine/internal/egress.js"
import {
  Arbor,
  Declarative,
  Groups,
  Identities,
  OrganizationDocument,
  Principal,
  Role,
  RoleBindings,
  Store
} from "../src/index.js"
import * as Refusal from "../src/testing/Refusal.js"
import { acme, describeChanges, errorOf, withArbor } from "./declarativeSupport.js"
import { engineOver, principalWith } from "./fixtures.js"

describe("Declarative: bindings' windows and conditions, subscriptions, names, refusals and failures", () => {
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
      const engine = engineOver((store) => ({
        insert: (table, row) =>
          armed && ++inserts >= 7
            ? Effect.fail(new Store.StoreError({ cause: "the disk is full" }))
            : store.insert(table, row),
        insertMany: (table, rows) =>
          armed && ++inserts >= 7
            ? Effect.fail(new Store.StoreError({ cause: "the disk is full" }))
            : store.insertMany(table, rows)
      }))
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
