/**
 * Everything that differs between SQL databases, in one place. The statements in `SqlStore` are built from
 * `@effect/sql` fragments and these few functions, so a PostgreSQL dialect (over `@effect/sql-pg`) can reuse them.
 */
import type * as Statement from "@effect/sql/Statement"

/** The database-specific parts of the SQL store. */
export interface Dialect {
  readonly name: string
  /** `column`, holding a json array of strings, holds one of `values` (never empty). */
  readonly overlaps: (sql: Statement.Constructor, column: string, values: ReadonlyArray<string>) => Statement.Fragment
  /** `column`, a text, contains `value` as a substring (case-sensitive, no wildcards). */
  readonly contains: (sql: Statement.Constructor, column: string, value: string) => Statement.Fragment
  /** The `LIMIT … OFFSET …` clause; `limit` undefined means no limit. */
  readonly limitOffset: (sql: Statement.Constructor, limit: number | undefined, offset: number) => Statement.Fragment
  /** Values as stored, and back. */
  readonly encodeBoolean: (value: boolean) => unknown
  readonly decodeBoolean: (value: unknown) => boolean
  readonly encodeJson: (value: unknown) => unknown
  readonly decodeJson: (value: unknown) => unknown
  /** The (snake_case) columns a failed statement's unique violation names, or undefined when it is not one. */
  readonly uniqueViolation: (cause: unknown) => ReadonlyArray<string> | undefined
  /** True when a failure means another connection holds the lock: retrying the transaction may succeed. */
  readonly isBusy: (cause: unknown) => boolean
}

const errorCode = (cause: unknown): string =>
  typeof cause === "object" && cause !== null && typeof (cause as { code?: unknown }).code === "string"
    ? (cause as { code: string }).code
    : ""

const errorMessage = (cause: unknown): string => cause instanceof Error ? cause.message : String(cause)

/** SQLite, through better-sqlite3: booleans as integers, json as text, json_each for arrays. */
export const sqlite: Dialect = {
  name: "sqlite",
  overlaps: (sql, column, values) =>
    sql`EXISTS (SELECT 1 FROM json_each(${sql(column)}) WHERE json_each.value IN ${sql.in(values)})`,
  contains: (sql, column, value) => sql`instr(${sql(column)}, ${value}) > 0`,
  limitOffset: (sql, limit, offset) => sql`LIMIT ${limit ?? -1} OFFSET ${offset}`,
  encodeBoolean: (value) => value ? 1 : 0,
  decodeBoolean: (value) => value === 1 || value === 1n || value === true,
  encodeJson: (value) => JSON.stringify(value),
  decodeJson: (value) => typeof value === "string" ? JSON.parse(value) : value,
  uniqueViolation: (cause) => {
    const code = errorCode(cause)
    if (code !== "SQLITE_CONSTRAINT_UNIQUE" && code !== "SQLITE_CONSTRAINT_PRIMARYKEY") return undefined
    const message = errorMessage(cause)
    const index = /index '[a-z_]+__unique__([a-z_]+)'/.exec(message)
    if (index !== null) return index[1]!.split("__")
    const columns = /constraint failed: (.*)$/.exec(message)
    return columns === null ? [] : columns[1]!.split(", ").map((c) => c.slice(c.indexOf(".") + 1))
  },
  isBusy: (cause) => {
    const code = errorCode(cause)
    return code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED")
  }
}
