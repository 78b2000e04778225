/**
 * The OpenID AuthZEN interop search demo (`interop/authzen-search-demo` of github.com/openid/authzen): its action,
 * resource and subject searches (copied whole into `authzen-interop/`, see its SOURCE.md), each sent as the file
 * writes it to an organization's decision point and compared as a set, as the demo's runner compares them. The
 * demo's people and records (its `data/users.json` and `data/records.json`) are below, and its policy is bindings:
 * an owner views, edits and deletes their records; a manager views every record and edits those of their
 * department; anyone else views the records of their department.
 */
import { DecisionVocabularies, Groups, Identities, Principal, RoleBindings, Roles } from "@arbor/core"
import * as Effect from "effect/Effect"
import { readFileSync } from "node:fs"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { freePort, startServer } from "./signInSupport.js"
import { fetchJson, tokenFor } from "./support.js"

/** The demo's people: their role and department. */
const people = {
  alice: { role: "manager", department: "Sales" },
  bob: { role: "employee", department: "Legal" },
  carol: { role: "contractor", department: "Legal" },
  dan: { role: "manager", department: "Finance" },
  erin: { role: "employee", department: "Finance" },
  felix: { role: "contractor", department: "Accounting" }
} as const
type Person = keyof typeof people

/** The demo's records, 101 to 120: each one's department and owner. */
const records: ReadonlyArray<readonly [number, string, Person]> = [
  [101, "Legal", "alice"],
  [102, "Legal", "bob"],
  [103, "Legal", "carol"],
  [104, "Accounting", "dan"],
  [105, "Legal", "erin"],
  [106, "Accounting", "felix"],
  [107, "Sales", "alice"],
  [108, "Legal", "bob"],
  [109, "Accounting", "carol"],
  [110, "Sales", "dan"],
  [111, "Accounting", "erin"],
  [112, "Legal", "felix"],
  [113, "Sales", "alice"],
  [114, "Accounting", "bob"],
  [115, "Finance", "carol"],
  [116, "Legal", "dan"],
  [117, "Legal", "erin"],
  [118, "Accounting", "felix"],
  [119, "Legal", "alice"],
  [120, "Accounting", "bob"]
]

let server: Awaited<ReturnType<typeof startServer>>
let org: string
let pep: string

beforeAll(async () => {
  server = await startServer(await freePort(), {})
  await server.runtime.runPromise(Effect.gen(function*() {
    const groups = yield* Groups.Groups
    const roles = yield* Roles.Roles
    const bindings = yield* RoleBindings.RoleBindings
    const identities = yield* Identities.Identities
    org = (yield* groups.createRoot(Principal.system, { name: "records-search" })).uid
    const role = (name: string, capabilities: ReadonlyArray<"repo.list" | "repo.update" | "repo.delete">) =>
      roles.create(Principal.system, org, { name, capabilities: [...capabilities] })
    const view = yield* role("record-viewer", ["repo.list"])
    const edit = yield* role("record-editor", ["repo.list", "repo.update"])
    const own = yield* role("record-owner", ["repo.list", "repo.update", "repo.delete"])
    const person = (name: string) =>
      identities.create(Principal.system, org, {
        name,
        claimMatch: { issuer: "https://search.invalid", subject: name }
      })
    // The enforcement point may read who is bound where, and holds nothing it asks about.
    const enforcer = yield* person("search-demo")
    const reads = yield* roles.create(Principal.system, org, { name: "pep", capabilities: ["role_bindings.list"] })
    yield* bindings.create(Principal.system, org, { identityUid: enforcer.uid, roleUid: reads.uid })
    pep = yield* tokenFor(enforcer.uid)
    const folder = yield* groups.create(Principal.system, org, { name: "records" })
    const uids = new Map<Person, string>()
    for (const name of Object.keys(people) as Array<Person>) uids.set(name, (yield* person(name)).uid)
    for (const [name, { role }] of Object.entries(people)) {
      if (role === "manager") {
        yield* bindings.create(Principal.system, folder.uid, {
          identityUid: uids.get(name as Person)!,
          roleUid: view.uid
        })
      }
    }
    for (const [id, department, owner] of records) {
      const record = yield* groups.create(Principal.system, folder.uid, { name: String(id) })
      for (
        const [name, { department: theirs, role }] of Object.entries(people) as Array<[Person, typeof people[Person]]>
      ) {
        // The strongest of what the policy gives each person here.
        const given = name === owner
          ? own
          : role === "manager" && theirs === department
          ? edit
          : role !== "manager" && theirs === department
          ? view
          : undefined
        if (given !== undefined) {
          yield* bindings.create(Principal.system, record.uid, { identityUid: uids.get(name)!, roleUid: given.uid })
        }
      }
    }
    yield* (yield* DecisionVocabularies.DecisionVocabularies).set(Principal.system, org, {
      subjects: { user: { by: "path" } },
      actions: { view: "repo.list", edit: "repo.update", delete: "repo.delete" },
      resources: { record: { folders: "records" } }
    })
  }))
}, 60_000)

afterAll(async () => {
  await server?.close()
})

/** A search file's requests and their expected results. */
interface Searches {
  readonly evaluation: ReadonlyArray<{ readonly request: unknown; readonly expected: { readonly results: unknown } }>
}

/** Each search of `file` at the organization's `endpoint`: what came out otherwise than the file says, as sets. */
const run = async (endpoint: string, file: string) => {
  const { evaluation }: Searches = JSON.parse(
    readFileSync(new URL(`./authzen-interop/${file}`, import.meta.url), "utf8")
  )
  const asSet = (results: unknown) =>
    (results as ReadonlyArray<Record<string, string>>).map((r) => JSON.stringify(r, Object.keys(r).sort())).sort()
  const wrong: Array<string> = []
  for (const { expected, request } of evaluation) {
    const answer = await fetchJson(server.url, "POST", `/authzen/${org}/access/v1/search/${endpoint}`, pep, request)
    if (
      answer.status !== 200 || JSON.stringify(asSet(answer.body.results)) !== JSON.stringify(asSet(expected.results))
    ) {
      wrong.push(`${JSON.stringify(request)}: ${answer.status} ${JSON.stringify(answer.body)}`)
    }
  }
  return { asked: evaluation.length, wrong }
}

describe("the AuthZEN interop search demo, verbatim at an organization's decision point", () => {
  it("action searches: what each person may do to each record", async () => {
    const { asked, wrong } = await run("action", "search-action-results.json")
    assert.deepStrictEqual(wrong, [])
    assert.strictEqual(asked, 120)
  })

  it("resource searches: the records each person may view, edit or delete", async () => {
    const { asked, wrong } = await run("resource", "search-resource-results.json")
    assert.deepStrictEqual(wrong, [])
    assert.strictEqual(asked, 18)
  })

  it("subject searches: who may view, edit or delete each record", async () => {
    const { asked, wrong } = await run("subject", "search-subject-results.json")
    assert.deepStrictEqual(wrong, [])
    assert.strictEqual(asked, 60)
  })
})
