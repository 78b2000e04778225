/**
 * PostgreSQL shut down under load (DECISIONS §20): the server's own PostgreSQL, stopped (a fast shutdown: each
 * session told `terminating connection due to administrator command`, then gone) while 20 callers create and read
 * groups. Every answer from then on is 503 UNAVAILABLE with Retry-After, never 500: a write in flight meets the store's
 * end at any moment of its transaction (its BEGIN, a statement, its COMMIT or ROLLBACK), which `@effect/sql` reports
 * as a defect at COMMIT and ROLLBACK.
 */
import { EmbeddedPostgres } from "@arbor/store-postgres/testing"
import * as Redacted from "effect/Redacted"
import { afterAll, assert, describe, it } from "vitest"
import { freePort } from "./processes.js"
import { startServer } from "./signInSupport.js"
import { member } from "./support.js"

describe("PostgreSQL shut down under load", () => {
  let server: Awaited<ReturnType<typeof startServer>> | undefined
  let postgres: EmbeddedPostgres.Running | undefined
  afterAll(async () => {
    await server?.close()
    await postgres?.stop().catch(() => {})
  })

  it("every write and read in flight or after is 503 UNAVAILABLE with Retry-After, none 500", async () => {
    postgres = await EmbeddedPostgres.start()
    server = await startServer(await freePort(), {
      store: "postgres",
      databaseUrl: Redacted.make(postgres.url),
      databasePool: 20
    })
    const { org, token } = await server.runtime.runPromise(member("acme"))
    const base = server.url
    const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" }
    let served = 0
    let stopping: Promise<void> | undefined
    const answers: Array<{ readonly status: number; readonly retryAfter: string | null; readonly body: string }> = []
    // Each caller creates and reads until the store has served 300 requests, is then stopped under them, and goes on
    // for 50 more answers.
    const caller = async () => {
      let answered = 0
      for (let i = 0; answered < 50; i++) {
        const response = i % 2 === 0
          ? await fetch(`${base}/iam/v2beta1/groups/${org}`, {
            method: "POST",
            headers,
            body: JSON.stringify({ name: `f${Math.random().toString(36).slice(2, 10)}` })
          })
          : await fetch(`${base}/iam/v2beta1/groups?uidp.descendants_of=${org}&page_size=5`, { headers })
        const body = await response.text()
        answers.push({ status: response.status, retryAfter: response.headers.get("retry-after"), body })
        if (stopping === undefined) {
          if (response.status === 200 && ++served === 300) stopping = postgres!.stop()
        } else {
          answered++
        }
      }
    }
    await Promise.all(Array.from({ length: 20 }, caller))
    await stopping
    postgres = undefined
    // Before the stop, a write may also lose its serialization race past every retry: UNAVAILABLE too.
    const failed = answers.filter((a) => a.status !== 200 && (a.status !== 503 || a.retryAfter !== "1"))
    assert.deepStrictEqual(failed.slice(0, 3), [], `${failed.length} of ${answers.length} answers`)
    assert.isAbove(answers.filter((a) => a.status === 503).length, 900, "the store is gone for all but those in flight")
  }, 120_000)
})
