/**
 * Everything that differs between SQL databases, in one place. The statements of `SqlStore` are built from
 * `@effect/sql` fragments and these few functions; each adapter (SQLite, PostgreSQL) gives its own.
 */
import type { Store } from "@arbor/core"
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
  /** The name of the unique constraint (see `constraintName`) a failure violated, or undefined when it is not one. */
  readonly uniqueViolation: (cause: unknown) => string | undefined
  /**
   * True when a failure means the transaction lost to a concurrent one (a lock, a serialization failure, a
   * deadlock): retrying the whole transaction may succeed.
   */
  readonly isRetryable: (cause: unknown) => boolean
  /**
   * True when a failure means the database cannot be reached now (a connection refused or dropped, the server
   * shutting down, a file that cannot be opened or written): the request is UNAVAILABLE, not an internal error.
   */
  readonly isUnavailable: (cause: unknown) => boolean
  /**
   * The statement answering `Store.settledPosition` (one row, `position`), for databases whose writers commit
   * concurrently; absent where writers commit one at a time in position order.
   */
  readonly settledPosition?: (sql: Statement.Constructor) => Statement.Statement<{ readonly position: string }>
  /** A statement every outermost transaction runs first (its isolation level), if the database needs one. */
  readonly beginTransaction?: (sql: Statement.Constructor) => Statement.Statement<unknown>
  /**
   * A statement that lets the transaction's commit be acknowledged before it is durable (`Store.lazyCommit`), for
   * databases that wait for the disk at each commit.
   */
  readonly lazyCommit?: (sql: Statement.Constructor) => Statement.Statement<unknown>
  /**
   * The statement answering `Store.claim` (one row, `claimed`), for databases whose transactions run concurrently;
   * absent where they run one at a time.
   */
  readonly claim?: (sql: Statement.Constructor, name: string) => Statement.Statement<{ readonly claimed: unknown }>
}

/** `createTime` is stored as `create_time`. */
export const snake = (name: string): string => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)

/**
 * The name every adapter's schema gives a table's unique constraint over `columns` (`groups__unique__parent__name`),
 * or its primary key (`groups__pkey`) when `columns` is `["uid"]`.
 */
export const constraintName = (table: string, columns: ReadonlyArray<string>): string =>
  columns.length === 1 && columns[0] === "uid" ? `${table}__pkey` : `${table}__unique__${columns.map(snake).join("__")}`

/** The columns of `table`'s constraint `name`, or undefined for a constraint the table does not declare. */
export const constraintColumns = (table: Store.Table, name: string): ReadonlyArray<string> | undefined =>
  [["uid"], ...table.unique].find((columns) => constraintName(table.name, columns) === name)

/** The `code` of a driver's error, or the empty string. */
export const errorCode = (cause: unknown): string =>
  typeof cause === "object" && cause !== null && typeof (cause as { code?: unknown }).code === "string"
    ? (cause as { code: string }).code
    : ""
