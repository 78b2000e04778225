/**
 * The rules a form checks as a person types, in the form's words: names and descriptions as the engine's own schemas
 * decide them, and each builder's fields as their issuers document them.
 */
import { assert, describe, it } from "vitest"
import * as Rules from "../src/ui/rules.js"

const verdicts = (rule: Rules.Rule, values: ReadonlyArray<string>) => values.map((value) => [value, rule.check(value)])

describe("form rules", () => {
  it("a name: the engine's rule, said in words", () => {
    assert.deepStrictEqual(verdicts(Rules.name, ["payments", "team a.b_c-d", "Payments", " x", "..", "x".repeat(64)]), [
      ["payments", true],
      ["team a.b_c-d", true],
      ["Payments", false],
      [" x", false],
      ["..", false],
      ["x".repeat(64), false]
    ])
    assert.notInclude(Rules.name.says, "^")
  })

  it("the builders' fields: a repository needs its owner, a project its group, Kubernetes names their DNS forms", () => {
    assert.deepStrictEqual(verdicts(Rules.githubRepository, ["acme/app", "payments", "acme/app/x", "acme/"]), [
      ["acme/app", true],
      ["payments", false],
      ["acme/app/x", false],
      ["acme/", false]
    ])
    assert.deepStrictEqual(verdicts(Rules.gitlabProject, ["acme/app", "acme/platform/app", "app"]), [
      ["acme/app", true],
      ["acme/platform/app", true],
      ["app", false]
    ])
    assert.deepStrictEqual(verdicts(Rules.namespace, ["default", "kube-system", "Default", "-x", "a".repeat(64)]), [
      ["default", true],
      ["kube-system", true],
      ["Default", false],
      ["-x", false],
      ["a".repeat(64), false]
    ])
    assert.deepStrictEqual(verdicts(Rules.serviceAccount, ["deployer", "build.bot", "Deployer", "a_b"]), [
      ["deployer", true],
      ["build.bot", true],
      ["Deployer", false],
      ["a_b", false]
    ])
    assert.deepStrictEqual(verdicts(Rules.branch, ["main", "release/1.2", "my branch", "a..b", "-x"]), [
      ["main", true],
      ["release/1.2", true],
      ["my branch", false],
      ["a..b", false],
      ["-x", false]
    ])
  })
})
