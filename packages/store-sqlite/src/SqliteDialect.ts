/**
 * SQLite, through better-sqlite3: booleans as integers, json as text, `json_each` for arrays.
 */
import { Dialect } from "@arbor/store-sql"

const errorMessage = (cause: unknown): string => cause instanceof Error ? cause.message : String(cause)

/** The SQLite dialect of the SQL store. */
export const dialect: Dialect.Dialect = {
  name: "sqlite",
  overlaps: (sql, column, values) =>
    sql`EXISTS (SELECT 1 FROM json_each(${sql(column)}) WHERE json_each.value IN ${sql.in(values)})`,
  contains: (sql, column, value) => sql`instr(${sql(column)}, ${value}) > 0`,
  limitOffset: (sql, limit, offset) => sql`LIMIT ${limit ?? -1} OFFSET ${offset}`,
  encodeBoolean: (value) => value ? 1 : 0,
  decodeBoolean: (value) => value === 1 || value === 1n || value === true,
  encodeJson: (value) => JSON.stringify(value),
  decodeJson: (value) => typeof value === "string" ? JSON.parse(value) : value,
  // SQLite names an expression index (`index 'groups__unique__parent__name'`) and otherwise lists the columns
  // (`identities.parent, identities.name`), from which the constraint's name follows.
  uniqueViolation: (cause) => {
    const code = Dialect.errorCode(cause)
    if (code !== "SQLITE_CONSTRAINT_UNIQUE" && code !== "SQLITE_CONSTRAINT_PRIMARYKEY") return undefined
    const message = errorMessage(cause)
    const index = /index '([a-z_]+)'/.exec(message)
    if (index !== null) return index[1]!
    const columns = /constraint failed: ([a-z_]+)\.([a-z_]+(?:, [a-z_]+\.[a-z_]+)*)$/.exec(message)
    if (columns === null) return ""
    const names = columns[0].slice("constraint failed: ".length).split(", ").map((c) => c.slice(c.indexOf(".") + 1))
    return Dialect.constraintName(columns[1]!, names)
  },
  isRetryable: (cause) => {
    const code = Dialect.errorCode(cause)
    return code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED")
  },
  // Locked past every retry, a file that cannot be opened, read or written, a full disk.
  isUnavailable: (cause) => /^SQLITE_(BUSY|LOCKED|CANTOPEN|READONLY|IOERR|FULL)/.test(Dialect.errorCode(cause))
}
