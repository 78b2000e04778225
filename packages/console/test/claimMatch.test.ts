/**
 * The identity form's builders: each workload's claim match, in the subject format its issuer documents, accepted by
 * the engine's own schema (so the server takes what the console sends).
 */
import { ClaimMatchInput } from "@arbor/core/ClaimMatch"
import * as Schema from "effect/Schema"
import { assert, describe, it } from "vitest"
import { builderOf, claimMatchOf } from "../src/identities/claimMatch.js"

const accepted = (claimMatch: unknown) => Schema.decodeUnknownEither(ClaimMatchInput)(claimMatch)._tag === "Right"

describe("claim match builders", () => {
  it("GitHub Actions: a branch's workflows, or every ref of the repository by pattern", () => {
    const branch = claimMatchOf("github", { repository: "acme/app", branch: "main" })
    assert.deepStrictEqual(branch, {
      issuer: "https://token.actions.githubusercontent.com",
      subject: "repo:acme/app:ref:refs/heads/main"
    })
    const any = claimMatchOf("github", { repository: "acme/app.js", branch: " " })
    assert.deepStrictEqual(any, {
      issuer: "https://token.actions.githubusercontent.com",
      subjectPattern: "repo:acme/app\\.js:.+"
    })
    assert.isTrue(accepted(branch))
    assert.isTrue(accepted(any))
  })

  it("GitLab CI: gitlab.com unless an instance is given, the project's branch", () => {
    assert.deepStrictEqual(claimMatchOf("gitlab", { project: "acme/app", branch: "main" }), {
      issuer: "https://gitlab.com",
      subject: "project_path:acme/app:ref_type:branch:ref:main"
    })
    const own = claimMatchOf("gitlab", { issuer: "https://gitlab.acme.example/", project: "acme/app", branch: "" })
    assert.deepStrictEqual(own, { issuer: "https://gitlab.acme.example", subjectPattern: "project_path:acme/app:.+" })
    assert.isTrue(accepted(own))
  })

  it("Kubernetes: the service account's subject", () => {
    const k8s = claimMatchOf("kubernetes", {
      issuer: "https://oidc.eks.us-west-2.amazonaws.com/id/ABC",
      namespace: "prod",
      serviceAccount: "deployer"
    })
    assert.strictEqual(k8s.subject, "system:serviceaccount:prod:deployer")
    assert.isTrue(accepted(k8s))
  })

  it("any issuer: the audience only when given; what is missing is the server's to refuse", () => {
    assert.deepStrictEqual(claimMatchOf("custom", { issuer: "https://issuer.example", subject: "s" }), {
      issuer: "https://issuer.example",
      subject: "s"
    })
    assert.isFalse(accepted(claimMatchOf("custom", { issuer: "", subject: "" })))
  })

  it("an identity the builder made reads back as the builder's fields; any other as its issuer and subject", () => {
    const made = [
      { kind: "github", values: { repository: "acme/app.js", branch: "main" } },
      { kind: "github", values: { repository: "acme/app.js", branch: "" } },
      {
        kind: "gitlab",
        values: { issuer: "https://gitlab.example.com", project: "acme/platform/app", branch: "main" }
      },
      { kind: "gitlab", values: { issuer: "https://gitlab.com", project: "acme/app", branch: "" } },
      { kind: "kubernetes", values: { issuer: "https://k8s.example.com", namespace: "tools", serviceAccount: "agent" } }
    ] as const
    for (const { kind, values } of made) assert.deepStrictEqual(builderOf(claimMatchOf(kind, values)), { kind, values })
    const other = { issuer: "https://issuer.example.com", subject: "repo:acme/app:ref:refs/heads/main", audience: "x" }
    assert.deepStrictEqual(builderOf(other), { kind: "custom", values: { ...other, subjectPattern: "" } })
  })

  it("an identity with a subject pattern of its own is changed as it is: its pattern read back and sent again", () => {
    const patterned = { issuer: "https://ci.example.com", subjectPattern: "deploy:(staging|prod)", audience: "arbor" }
    const read = builderOf(patterned)
    assert.deepStrictEqual(read, {
      kind: "custom",
      values: {
        issuer: "https://ci.example.com",
        subject: "",
        subjectPattern: "deploy:(staging|prod)",
        audience: "arbor"
      }
    })
    assert.deepStrictEqual(claimMatchOf(read.kind, read.values), patterned)
    assert.isTrue(accepted(claimMatchOf(read.kind, read.values)))
  })
})
