/**
 * IAM as code (`Declarative`): a document applied, exported, planned again; drift and prune; identity providers and their
 * secrets, by reference only.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fc from "effect/FastCheck"
import { parse } from "yaml"
import { Declarative, Elevations, Groups, Identities, OrganizationDocument, Principal, Role } from "../src/index.js"
import * as Refusal from "../src/testing/Refusal.js"
import { acme, describeChanges, errorOf, withArbor } from "./declarativeSupport.js"
import { principalWith } from "./fixtures.js"

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

  it.effect("a binding an elevation made is not the document's: neither exported nor pruned, so prune still applies", () =>
    withArbor(Effect.gen(function*() {
      const declarative = yield* Declarative.Declarative
      yield* declarative.apply(Principal.system, acme)
      const exported = yield* declarative.exportOrganization(Principal.system, "acme")
      const [org] = (yield* (yield* Groups.Groups).list(Principal.system, { inRoot: true, name: "acme" })).items
      const ci = (yield* (yield* Identities.Identities).list(Principal.system, { descendantsOf: org!.uid, name: "ci" }))
        .items[0]!
      const elevations = yield* Elevations.Elevations
      const editor = Role.builtInByName("editor")!.uid
      yield* elevations.createEligibility(Principal.system, org!.uid, {
        identityUid: ci.uid,
        roleUid: editor,
        maxDuration: "600s"
      })
      yield* elevations.elevate(Principal.identity(ci.uid), org!.uid, {
        roleUid: editor,
        reason: "fix",
        duration: "600s"
      })
      assert.deepStrictEqual(yield* declarative.exportOrganization(Principal.system, "acme"), exported)
      assert.deepStrictEqual((yield* declarative.apply(Principal.system, exported, { prune: true })).changes, [])
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
})
