import { assert, describe, it } from "@effect/vitest"
import { ClaimMatch } from "../src/index.js"

const issuer = "https://token.actions.githubusercontent.com"
const base = { issuer, subject: "repo:octo-org/octo-repo:ref:refs/heads/main", audience: "sts" }
const token = { iss: issuer, sub: "repo:octo-org/octo-repo:ref:refs/heads/main", aud: "sts" }

describe("ClaimMatch.mismatch", () => {
  it("names the first claim that does not match, in the order iss, sub, aud, claims, claim patterns", () => {
    assert.isUndefined(ClaimMatch.mismatch(base, token, []))
    assert.strictEqual(ClaimMatch.mismatch(base, { ...token, iss: "https://other", sub: "x" }, []), "iss")
    assert.strictEqual(ClaimMatch.mismatch(base, { ...token, sub: "x", aud: "y" }, []), "sub")
    assert.strictEqual(ClaimMatch.mismatch(base, { ...token, aud: "y" }, []), "aud")
    assert.strictEqual(ClaimMatch.mismatch({ ...base, claims: { ref: "main" } }, token, []), "ref")
    assert.strictEqual(ClaimMatch.mismatch({ ...base, claimPatterns: { ref: ".*" } }, token, []), "ref")
  })

  it("patterns match whole values only", () => {
    const match = { ...base, subject: undefined, subjectPattern: "repo:octo-org/[^:]+" }
    assert.strictEqual(ClaimMatch.mismatch(match, token, []), "sub")
    assert.isUndefined(ClaimMatch.mismatch({ ...match, subjectPattern: "repo:octo-org/[^:]+:.*" }, token, []))
    assert.strictEqual(ClaimMatch.mismatch({ ...match, subjectPattern: "main" }, token, []), "sub")
  })

  it("numbers and booleans compare as strings; arrays match by any element; objects and null never match", () => {
    const claims = { runner_id: 1, protected: false, groups: ["a", "b"], nested: { x: "1" }, nothing: null }
    const payload = { ...token, ...claims }
    assert.isUndefined(
      ClaimMatch.mismatch({ ...base, claims: { runner_id: "1", protected: "false", groups: "b" } }, payload, [])
    )
    assert.strictEqual(ClaimMatch.mismatch({ ...base, claims: { groups: "c" } }, payload, []), "groups")
    assert.strictEqual(ClaimMatch.mismatch({ ...base, claimPatterns: { nested: ".*" } }, payload, []), "nested")
    assert.strictEqual(ClaimMatch.mismatch({ ...base, claimPatterns: { nothing: ".*" } }, payload, []), "nothing")
    assert.strictEqual(ClaimMatch.mismatch({ ...base, claimPatterns: { absent: ".*" } }, payload, []), "absent")
  })

  it("without an audience the token must name one of the default audiences", () => {
    const match = { issuer, subject: token.sub }
    assert.isUndefined(ClaimMatch.mismatch(match, { ...token, aud: ["k8s", "arbor.invalid"] }, ["arbor.invalid"]))
    assert.strictEqual(ClaimMatch.mismatch(match, { ...token, aud: ["k8s"] }, ["arbor.invalid"]), "aud")
    assert.strictEqual(ClaimMatch.mismatch(match, { iss: issuer, sub: token.sub }, ["arbor.invalid"]), "aud")
  })
})

describe("ClaimMatch.claimAt", () => {
  it("finds top-level claims first, then dotted paths through the longest keys that fit", () => {
    const payload = {
      "kubernetes.io": { namespace: "kube-system", serviceaccount: { name: "coredns" } },
      "kubernetes.io/serviceaccount/namespace": "legacy",
      "a.b": "top",
      a: { b: "nested" }
    }
    assert.strictEqual(ClaimMatch.claimAt(payload, "kubernetes.io.namespace"), "kube-system")
    assert.strictEqual(ClaimMatch.claimAt(payload, "kubernetes.io.serviceaccount.name"), "coredns")
    assert.strictEqual(ClaimMatch.claimAt(payload, "kubernetes.io/serviceaccount/namespace"), "legacy")
    assert.strictEqual(ClaimMatch.claimAt(payload, "a.b"), "top")
    assert.isUndefined(ClaimMatch.claimAt(payload, "kubernetes.io.pod.name"))
    assert.isUndefined(ClaimMatch.claimAt(payload, "constructor"))
  })
})
