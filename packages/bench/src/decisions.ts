/**
 * Decisions for other services (docs/api.md §14): an AuthZEN evaluation over HTTP beside an authenticated GET of a
 * group by uid, a batch of 100 beside one evaluation (both against the standalone server on SQLite), and the
 * in-process `Access.can` beside the reads it needs, done by hand with better-sqlite3 on the same database (the
 * version row of the grants, then the cached grants).
 */
import { Access, Arbor, Groups, Identities, Principal, Role, RoleBindings, Secrets } from "@arbor/core"
import { SqliteStore } from "@arbor/store-sqlite"
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Comparison } from "./Harness.js"
import { compare, section } from "./Harness.js"
import { type Arbor as Server, startArbor } from "./Servers.js"

const evaluation = (subject: string, group: string) => ({
  subject: { type: "identity", id: subject },
  action: { name: "groups.list" },
  resource: { type: "group", id: group }
})

/** The HTTP figures, against a fresh standalone server. */
const overHttp = async (dir: string): Promise<ReadonlyArray<Comparison>> => {
  let server: Server | undefined
  try {
    server = await startArbor(join(dir, ".arbor"))
    const { base, org, token } = server
    const me = JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString()).sub as string
    const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" }
    const post = async (path: string, body: unknown) => {
      const response = await fetch(`${base}${path}`, { method: "POST", headers, body: JSON.stringify(body) })
      if (response.status !== 200) throw new Error(`${path}: ${response.status}`)
      return response.json()
    }
    const one = () => post("/access/v1/evaluation", evaluation(me, org))
    const get = async () => {
      const response = await fetch(`${base}/iam/v2beta1/groups/${org}`, { headers })
      if (response.status !== 200) throw new Error(`GET: ${response.status}`)
      return response.json()
    }
    const batch = {
      subject: { type: "identity", id: me },
      resource: { type: "group", id: org },
      evaluations: Array.from(
        { length: 100 },
        (_, i) => ({ action: { name: i % 2 === 0 ? "groups.list" : "repo.create" } })
      )
    }
    return [
      await compare("An AuthZEN evaluation over HTTP", {
        ours: one,
        baseline: get,
        baselineName: "an authenticated GET of the group by uid",
        target: 1.2
      }),
      await compare("A batch of 100 evaluations over HTTP", {
        ours: () => post("/access/v1/evaluations", batch),
        baseline: one,
        baselineName: "one evaluation",
        perRound: 50,
        target: 10
      })
    ]
  } finally {
    server?.child.kill("SIGTERM")
  }
}

/** The in-process figure: `Access.can` on the engine over SQLite, beside its reads by hand on the same file. */
const inProcess = async (dir: string): Promise<Comparison> => {
  const filename = join(dir, "decisions.db")
  const runtime = ManagedRuntime.make(
    Arbor.layer.pipe(Layer.provideMerge(SqliteStore.layer({ filename })), Layer.provide(Secrets.layerEphemeral))
  )
  try {
    const { group, principal } = await runtime.runPromise(Effect.gen(function*() {
      const org = yield* (yield* Groups.Groups).createRoot(Principal.system, { name: "decided" })
      const identity = yield* (yield* Identities.Identities).create(Principal.system, org.uid, {
        name: "asker",
        claimMatch: { issuer: "https://issuer.example.com", subject: "asker" }
      })
      yield* (yield* RoleBindings.RoleBindings).create(Principal.system, org.uid, {
        identityUid: identity.uid,
        roleUid: Role.builtInByName("viewer")!.uid
      })
      return { group: org.uid, principal: Principal.identity(identity.uid) }
    }))
    const access = await runtime.runPromise(Access.Access)
    const can = () => runtime.runPromise(access.can(principal, "groups.list", group))
    // By hand: the version row `can` reads to know its cached grants are current, then the check on them.
    const db = new Database(filename, { readonly: true })
    const version = db.prepare("SELECT value FROM versions WHERE uid = ?")
    const grants = [{ group, capabilities: new Set(["groups.list"]) }]
    const byHand = () => {
      version.get("0000000000000000000000000000000000000001")
      return grants.some((g) =>
        g.capabilities.has("groups.list") && (g.group === group || group.startsWith(`${g.group}/`))
      )
    }
    const result = await compare("Access.can in process (SQLite)", {
      ours: can,
      baseline: byHand,
      baselineName: "its version read and grants check by hand",
      perRound: 2000,
      target: 2
    })
    db.close()
    return result
  } finally {
    await runtime.dispose()
  }
}

/** Runs the suite; returns its report section. */
export const run = async (_scale: number): Promise<string> => {
  const dir = mkdtempSync(join(tmpdir(), "arbor-bench-decisions-"))
  try {
    const http = await overHttp(dir)
    const local = await inProcess(dir)
    return section(
      "Decisions (AuthZEN)",
      [
        "An evaluation (`POST /access/v1/evaluation`, the bootstrap owner about itself) beside an authenticated",
        "`GET /iam/v2beta1/groups/<uid>`; a batch of 100 beside one evaluation; `Access.can` in process beside the",
        "version read and the check it makes on a cached identity, by hand on the same SQLite file."
      ],
      [...http, local]
    )
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
