/** Fresh databases on the tests' PostgreSQL server: one per store a test builds. */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import pg from "pg"
import { inject } from "vitest"
import { PostgresStore } from "../src/index.js"

const server = inject("postgresUrl")
let created = 0

/** A new, empty database on the server; its URL. */
export const freshDatabase = Effect.promise(async () => {
  const name = `arbor_${process.pid}_${++created}`
  const client = new pg.Client({ connectionString: server })
  await client.connect()
  try {
    await client.query(`CREATE DATABASE ${name}`)
  } finally {
    await client.end()
  }
  const url = new URL(server)
  url.pathname = `/${name}`
  return url.toString()
})

/** The PostgreSQL store over a new database, built afresh each time the layer is. */
export const freshStore = (maxConnections = 4) =>
  Layer.unwrapEffect(
    Effect.map(freshDatabase, (url) => PostgresStore.layer({ url: Redacted.make(url), maxConnections }))
  )
