/**
 * A condition's work is bounded (DECISIONS §21, docs/api.md §2): a cost budget per decision and per request, past
 * which the condition is undecided and grants nothing. The requests of the red team's finding, replayed over AuthZEN:
 * list concatenation past the item cap, long strings in the context, a pattern over them, each in a batch; each is
 * answered false, saying why under `explain`, and the next request decides afresh. (What each costs in time is
 * `pnpm bench`'s: the worst request the limits allow beside an ordinary evaluation.)
 */
import { Role } from "@arbor/core"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { freePort, startServer } from "./signInSupport.js"
import { fetchJson, member } from "./support.js"

let server: Awaited<ReturnType<typeof startServer>>
let owner: { org: string; identity: string; token: string }
let subject: string

const viewerRole = Role.builtInByName("viewer")!.uid

/** The expressions of the finding, and one that a request's budget covers a few times only. */
const expressions = {
  concatenated: `(${Array.from({ length: 30 }, () => "context.l").join(" + ")}).exists(x, x == "absent")`,
  pattern: `context.l.exists(x, context.big.matches("(a|b)*c"))`,
  search: `context.l.exists(x, x == context.needle)`
}

beforeAll(async () => {
  server = await startServer(await freePort(), {})
  owner = await server.runtime.runPromise(member("costly"))
  const rest = (method: string, path: string, body?: unknown) => fetchJson(server.url, method, path, owner.token, body)
  const identity = await rest("POST", `/iam/v2beta1/identities/${owner.org}`, {
    name: "conditioned",
    claimMatch: { issuer: "https://issuer.example.com", subject: "conditioned" }
  })
  subject = identity.body.uid
  for (const [title, expression] of Object.entries(expressions)) {
    const bound = await rest("POST", `/iam/v2beta1/roleBindings/${owner.org}`, {
      identityUid: subject,
      roleUid: viewerRole,
      condition: { expression, title }
    })
    // One binding per (identity, role): each expression in an organization's folder of its own.
    if (bound.status === 409) {
      const folder = await rest("POST", `/iam/v2beta1/groups/${owner.org}`, { name: title })
      const made = await rest("POST", `/iam/v2beta1/roleBindings/${folder.body.uid}`, {
        identityUid: subject,
        roleUid: viewerRole,
        condition: { expression, title }
      })
      assert.strictEqual(made.status, 200, JSON.stringify(made.body))
    } else {
      assert.strictEqual(bound.status, 200, JSON.stringify(bound.body))
    }
  }
}, 30_000)

afterAll(async () => {
  await server?.close()
})

const post = (path: string, body: unknown) => fetchJson(server.url, "POST", path, owner.token, body)

/** The folder each expression decides at (the first at the organization itself). */
const groupOf = async (title: keyof typeof expressions) => {
  if (title === "concatenated") return owner.org
  const listed = await fetchJson(
    server.url,
    "GET",
    `/iam/v2beta1/groups?uidp.children_of=${owner.org}&name=${title}`,
    owner.token
  )
  return listed.body.groups[0].uid as string
}

const asked = (group: string, context: object) => ({
  subject: { type: "identity", id: subject },
  action: { name: "groups.list" },
  resource: { type: "group", id: group },
  context
})

const items = Array.from({ length: 1000 }, (_, i) => `item-${i}`)

describe("a condition's cost budget", () => {
  it("list concatenation past the cap, a pattern over long strings: undecided, said under explain", async () => {
    const concatenated = await post(
      "/access/v1/evaluation",
      asked(await groupOf("concatenated"), { l: items, explain: true })
    )
    assert.strictEqual(concatenated.status, 200, JSON.stringify(concatenated.body))
    assert.isFalse(concatenated.body.decision)
    assert.include(JSON.stringify(concatenated.body.context), "cost budget is spent")
    const pattern = await post(
      "/access/v1/evaluation",
      asked(await groupOf("pattern"), { l: items.slice(0, 3), big: "a".repeat(60_000), explain: true })
    )
    assert.isFalse(pattern.body.decision)
    assert.include(JSON.stringify(pattern.body.context), "cost budget is spent")
  })

  it("strings past the characters a condition is given: undecided", async () => {
    const tooLong = await post(
      "/access/v1/evaluation",
      asked(await groupOf("pattern"), { l: ["a"], big: "a".repeat(100_001), explain: true })
    )
    assert.isFalse(tooLong.body.decision)
    assert.include(JSON.stringify(tooLong.body.context), "100000 characters")
  })

  it("a batch spends one budget: its first decisions are made, the rest undecided; the next request starts afresh", async () => {
    const group = await groupOf("search")
    // The needle last: each decision reads the whole list, a fifth or so of a request's budget.
    const batch = {
      ...asked(group, { l: items, needle: items.at(-1) }),
      evaluations: Array.from({ length: 12 }, () => ({}))
    }
    const decided = (await post("/access/v1/evaluations", batch)).body.evaluations.map(
      (e: { decision: boolean }) => e.decision
    ) as Array<boolean>
    const made = decided.filter((d) => d).length
    assert.isAbove(made, 0, JSON.stringify(decided))
    assert.isBelow(made, decided.length, "the batch's budget ends before its last evaluation")
    assert.deepStrictEqual(decided, [...Array(made).fill(true), ...Array(decided.length - made).fill(false)])
    // A cheap question of the same identity, in the next request: decided as ever.
    const next = await post("/access/v1/evaluation", asked(group, { l: ["x"], needle: "x" }))
    assert.isTrue(next.body.decision)
  })
})
