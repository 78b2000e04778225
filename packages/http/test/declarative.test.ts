/**
 * IAM as code over REST: `GET /iam/v2beta1/groups/<uid>:export` and `POST /iam/v2beta1/groups/<uid>:apply`, as a
 * client sends them (the colon on the wire).
 */
import { Declarative, Principal } from "@arbor/core"
import { Refusal } from "@arbor/core/testing"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freshDatabase } from "../../store-postgres/test/databases.js"
import * as Seed from "../src/Seed.js"
import * as Server from "../src/Server.js"
import { call, member, testConfig, testServer } from "./support.js"

const document = {
  organizations: {
    acme: {
      folders: { prod: { folders: { web: {} } }, staging: {} },
      roles: { deployer: ["repo.create", "repo.list"] },
      identities: {
        "prod/ci": {
          issuer: "https://token.actions.githubusercontent.com",
          subject: "repo:acme/app:ref:refs/heads/main"
        }
      },
      bindings: [{ identity: "prod/ci", role: "deployer", group: "prod" }]
    }
  }
}

describe("organizations as code over REST", () => {
  it.scopedLive("plans with validateOnly, applies, exports what it applied, and plans nothing the second time", () =>
    Effect.gen(function*() {
      const { org, token } = yield* member("acme")
      const apply = (body: object) => call("POST", `/iam/v2beta1/groups/${org}:apply`, { token, body })

      const planned = yield* apply({ document, validateOnly: true })
      assert.strictEqual(planned.status, 200, planned.text)
      assert.deepStrictEqual(planned.body.changes.map((c: { path: string }) => c.path), [
        "acme/prod",
        "acme/prod/web",
        "acme/staging",
        "acme/deployer",
        "acme/prod/ci",
        "acme/prod/ci → deployer at acme/prod"
      ])
      const before = yield* call("GET", `/iam/v2beta1/groups/${org}:export`, { token })
      assert.isUndefined(before.body.document.organizations.acme.folders, "validateOnly changed nothing")

      // The plan's etag applies only what the plan read: a stale one is 409 ABORTED.
      assert.strictEqual((yield* apply({ document, etag: "0".repeat(32) })).status, 409)
      assert.strictEqual((yield* apply({ document, etag: planned.body.etag })).status, 200)
      const exported = yield* call("GET", `/iam/v2beta1/groups/${org}:export`, { token })
      assert.deepStrictEqual(exported.body.document.organizations.acme.folders, document.organizations.acme.folders)
      assert.deepStrictEqual(exported.body.document.organizations.acme.roles, {
        deployer: ["repo.create", "repo.list"]
      })
      // The owner who applied is in the export too; applied again as exported, nothing changes.
      const again = yield* apply({ document: exported.body.document })
      assert.deepStrictEqual(again.body.changes, [], again.text)
    }).pipe(Effect.provide(testServer())))

  it.scopedLive("a bad document, one naming another organization or a folder's uid is INVALID_ARGUMENT", () =>
    Effect.gen(function*() {
      const { org, token } = yield* member("acme")
      const apply = (uid: string, body: object) => call("POST", `/iam/v2beta1/groups/${uid}:apply`, { token, body })
      const fieldOf = (reply: { body: any }) =>
        reply.body.details.find((d: { fieldViolations?: unknown }) => d.fieldViolations !== undefined)
          .fieldViolations[0].field
      const wrongRole = yield* apply(org, {
        document: { organizations: { acme: { bindings: [{ identity: "nobody", role: "viewer" }] } } }
      })
      assert.strictEqual(wrongRole.status, 400, wrongRole.text)
      assert.strictEqual(fieldOf(wrongRole), "organizations.acme.bindings[0].identity")
      const other = yield* apply(org, { document: { organizations: { globex: {} } } })
      assert.strictEqual(other.status, 400)
      assert.strictEqual(fieldOf(other), "organizations")
      const created = yield* call("POST", `/iam/v2beta1/groups/${org}`, { token, body: { name: "team" } })
      const folder = yield* apply(created.body.uid, { document: { organizations: { team: {} } } })
      assert.strictEqual(folder.status, 400)
      assert.strictEqual(fieldOf(folder), "uid")
    }).pipe(Effect.provide(testServer())))

  it.scopedLive("a client secret comes only with the request: the server never reads its own files or environment for one", () =>
    Effect.gen(function*() {
      const { org, token } = yield* member("acme")
      // A file only the server could read: a request naming it must not make it the provider's secret (its issuer
      // would then receive the file's contents at the next sign-in).
      const serverFile = join(mkdtempSync(join(tmpdir(), "arbor-server-only-")), "secret")
      writeFileSync(serverFile, "the server's own secret")
      const withProvider = {
        organizations: {
          acme: {
            identityProviders: {
              okta: {
                defaultRole: "viewer",
                issuer: "https://acme.okta.example.com",
                clientId: "arbor",
                secretFrom: { file: serverFile }
              }
            }
          }
        }
      }
      const apply = (body: object) => call("POST", `/iam/v2beta1/groups/${org}:apply`, { token, body })
      const unsent = yield* apply({ document: withProvider })
      assert.strictEqual(unsent.status, 400, unsent.text)
      const violation = unsent.body.details.find((d: { fieldViolations?: unknown }) => d.fieldViolations !== undefined)
        .fieldViolations[0]
      assert.strictEqual(violation.field, "organizations.acme.identityProviders.okta.secretFrom")
      assert.include(violation.description, `file:${serverFile} was not sent with the request`)
      const inline = yield* apply({
        document: {
          organizations: {
            acme: {
              identityProviders: {
                okta: {
                  ...withProvider.organizations.acme.identityProviders.okta,
                  secretFrom: undefined,
                  clientSecret: "x"
                }
              }
            }
          }
        }
      })
      assert.strictEqual(inline.status, 400)
      const providers = yield* call("GET", `/iam/v2beta1/identityProviders?uidp.descendants_of=${org}`, { token })
      assert.deepStrictEqual(providers.body.identityProviders, [], providers.text)
      // Sent as the caller read it: applied, and the same secret again changes nothing.
      const sent = { document: withProvider, secrets: { [`file:${serverFile}`]: "the caller's secret" } }
      const applied = yield* apply(sent)
      assert.strictEqual(applied.status, 200, applied.text)
      assert.deepStrictEqual(applied.body.changes.map((c: { kind: string; path: string }) => `${c.kind} ${c.path}`), [
        "identityProvider acme/okta"
      ])
      assert.deepStrictEqual((yield* apply({ ...sent, validateOnly: true })).body.changes, [])
    }).pipe(Effect.provide(testServer())))

  it.scopedLive("groups:apply makes a document's organizations, creating one only for a platform admin", () =>
    Effect.gen(function*() {
      const { org, token } = yield* member("acme")
      const applyAll = (body: object) => call("POST", "/iam/v2beta1/groups:apply", { token, body })
      // An owner of acme may apply acme's document at the collection; creating globex is a platform admin's.
      const existing = yield* applyAll({ document: { organizations: { acme: { folders: { prod: {} } } } } })
      assert.strictEqual(existing.status, 200, existing.text)
      assert.deepStrictEqual(existing.body.changes.map((c: { path: string }) => c.path), ["acme/prod"])
      for (const validateOnly of [true, false]) {
        const refused = yield* applyAll({
          document: { organizations: { globex: { folders: { prod: {} } } } },
          validateOnly
        })
        assert.strictEqual(refused.status, 403, refused.text)
      }
      const roots = yield* call("GET", "/iam/v2beta1/groups?uidp.in_root=true", { token })
      assert.deepStrictEqual(roots.body.groups.map((g: { uid: string }) => g.uid), [org])
    }).pipe(Effect.provide(testServer())))

  it.scopedLive("a caller who may not make a change gets PERMISSION_DENIED, and nothing of the document is applied", () =>
    Effect.gen(function*() {
      const { org, token } = yield* member("acme", "viewer")
      // validateOnly makes each change as the caller and undoes them all: refused as the apply is.
      for (const validateOnly of [true, false]) {
        const reply = yield* call("POST", `/iam/v2beta1/groups/${org}:apply`, {
          token,
          body: { document: { organizations: { acme: { folders: { prod: {} } } } }, validateOnly }
        })
        assert.strictEqual(reply.status, 403)
      }
      const owner = yield* member("acme")
      const exported = yield* call("GET", `/iam/v2beta1/groups/${org}:export`, { token: owner.token })
      assert.isUndefined(exported.body.document.organizations.acme.folders)
    }).pipe(Effect.provide(testServer())))

  it.scopedLive("ARBOR_SEED_FILE: applied at start, and again at the next start with nothing to change", () =>
    Effect.gen(function*() {
      const file = join(mkdtempSync(join(tmpdir(), "arbor-seed-")), "seed.yaml")
      writeFileSync(
        file,
        "organizations:\n  seeded:\n    folders: { prod: {} }\n    roles: { deployer: [repo.create] }\n"
      )
      const config = testConfig({ seedFile: file })
      yield* Seed.run(config)
      const declarative = yield* Declarative.Declarative
      const exported = yield* declarative.exportOrganization(Principal.system, "seeded")
      assert.deepStrictEqual(exported.organizations.seeded, {
        folders: { prod: {} },
        roles: { deployer: ["repo.create"] }
      })
      yield* Seed.run(config)
      assert.deepStrictEqual((yield* declarative.plan(Principal.system, exported)).changes, [])
      // A file that is not a document stops the start, naming it.
      writeFileSync(file, "organizations: [1]")
      const refused = yield* Refusal.of(Seed.run(config))
      assert.strictEqual(refused._tag, "InvalidArgument")
    }).pipe(Effect.provide(Server.engine(testConfig()))))

  /** An engine on a new SQLite file or a new database of the tests' PostgreSQL server. */
  const engineOn = (store: "sqlite" | "postgres") =>
    store === "sqlite"
      ? Server.engine(testConfig({ store: "sqlite" }))
      : Layer.unwrapEffect(Effect.map(freshDatabase, (url) =>
        Server.engine(testConfig({ store: "postgres", databaseUrl: Redacted.make(url), databasePool: 2 }))))

  for (const store of ["sqlite", "postgres"] as const) {
    it.live(`round trip on ${store}: applied, exported, applied to an empty store, exported again: the same bytes`, () =>
      Effect.gen(function*() {
        const seeded = {
          organizations: {
            acme: {
              description: "Acme",
              folders: { prod: { description: "production", folders: { web: {} } }, staging: {} },
              roles: { deployer: { description: "ships", capabilities: ["repo.update", "repo.create"] } },
              identities: {
                "prod/ci": {
                  issuer: "https://token.actions.githubusercontent.com",
                  subject: "repo:acme/app:ref:refs/heads/main"
                },
                "staging/watcher": {
                  claimMatch: { issuer: "https://gitlab.example.com", subjectPattern: "project_path:acme/.+" }
                }
              },
              bindings: [
                { identity: "prod/ci", role: "deployer", group: "prod" },
                { identity: "staging/watcher", role: "viewer" }
              ],
              identityProviders: {
                okta: {
                  defaultRole: "viewer",
                  issuer: "https://acme.okta.example.com",
                  clientId: "arbor",
                  secretFrom: { env: "ARBOR_IDP_ACME__OKTA_CLIENT_SECRET" },
                  mappings: [{ externalGroup: "deployers", role: "deployer", scope: "prod" }]
                }
              }
            }
          }
        }
        const exportedFrom = (document: object) =>
          Effect.gen(function*() {
            const declarative = yield* Declarative.Declarative
            yield* declarative.apply(Principal.system, document, { secretOf: () => Effect.succeed("s3cret") })
            return JSON.stringify(yield* declarative.exportOrganization(Principal.system, "acme"))
          }).pipe(Effect.provide(engineOn(store)))
        const first = yield* exportedFrom(seeded)
        assert.deepStrictEqual(
          JSON.parse(first).organizations.acme.identityProviders,
          seeded.organizations.acme.identityProviders,
          "the provider, its secret as the variable to supply it in, and its mapping"
        )
        assert.strictEqual(yield* exportedFrom(JSON.parse(first)), first)
      }))
  }
})
