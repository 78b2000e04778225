/**
 * PostgreSQL, through `pg`: booleans as booleans, json as `jsonb`, text ordered by bytes (`COLLATE "C"` in the
 * schema), and every transaction serializable.
 */
import { Dialect } from "@arbor/store-sql"

/** SQLSTATEs worth retrying the whole transaction for: serialization failure, deadlock, lock not available. */
const retryable = new Set(["40001", "40P01", "55P03"])

/** Socket errors that say the server cannot be reached. */
const unreachable = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN"
])

/**
 * What says the server cannot be reached: SQLSTATE class 08 (connection exceptions), 57P01-57P03 (shutting down,
 * cannot connect now), 53300 (too many connections), the socket's own errors, and pg's words for a dropped one.
 */
const unavailable = (cause: unknown): boolean => {
  const code = Dialect.errorCode(cause)
  if (code.startsWith("08") || ["57P01", "57P02", "57P03", "53300"].includes(code) || unreachable.has(code)) {
    return true
  }
  const message = cause instanceof Error ? cause.message : ""
  return /Connection terminated|connection timeout|connection error|timeout exceeded when trying to connect/i.test(
    message
  )
}

/** The PostgreSQL dialect of the SQL store. */
export const dialect: Dialect.Dialect = {
  name: "postgres",
  overlaps: (sql, column, values) =>
    sql`jsonb_exists_any(${sql(column)}, ARRAY[${sql.csv(values.map((v) => sql`${v}`))}]::text[])`,
  contains: (sql, column, value) => sql`strpos(${sql(column)}, ${value}) > 0`,
  limitOffset: (sql, limit, offset) => sql`LIMIT ${limit ?? null} OFFSET ${offset}`,
  encodeBoolean: (value) => value,
  decodeBoolean: (value) => value === true,
  encodeJson: (value) => JSON.stringify(value),
  decodeJson: (value) => typeof value === "string" ? JSON.parse(value) : value,
  uniqueViolation: (cause) =>
    Dialect.errorCode(cause) === "23505" ? String((cause as { constraint?: unknown }).constraint ?? "") : undefined,
  isRetryable: (cause) => retryable.has(Dialect.errorCode(cause)),
  isUnavailable: unavailable,
  beginTransaction: (sql) => sql`SET TRANSACTION ISOLATION LEVEL SERIALIZABLE`,
  lazyCommit: (sql) => sql`SET LOCAL synchronous_commit = off`,
  // A transaction-scoped advisory lock, keyed by the name's 64-bit hash.
  claim: (sql, name) =>
    sql<{ readonly claimed: boolean }>`SELECT pg_try_advisory_xact_lock(hashtextextended(${name}, 0)) AS claimed`,
  // A position starts with its transaction's id (migration 8): every transaction whose id is below the oldest one
  // still running has ended, so no row can still appear below that id.
  settledPosition: (sql) =>
    sql<{ readonly position: string }>`SELECT lpad(pg_snapshot_xmin(pg_current_snapshot())::text, 20, '0') AS position`
}
