/**
 * PostgreSQL's DDL of the core's table descriptors (`@arbor/store-sql`'s `Ddl`), and its catalog. Text orders by
 * bytes (`COLLATE "C"`, the order every store shares); integers are `bigint` and json `jsonb`. A unique key over
 * `parent` treats null parents as equal (`NULLS NOT DISTINCT`). A `position` column is the committing transaction's id
 * then a sequence's next value, each 20 digits, so that positions follow the order of commits (`settledPosition`).
 */
import type { Store } from "@arbor/core"
import type { Ddl } from "@arbor/store-sql"
import { Dialect } from "@arbor/store-sql"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

const types: Readonly<Record<Store.ColumnType, string>> = {
  text: `text COLLATE "C"`,
  integer: "bigint",
  boolean: "boolean",
  json: "jsonb",
  position: `text COLLATE "C"`
}

const sequence = (table: Store.Table, name: string) => `${table.name}__${Dialect.snake(name)}_seq`

const column = (table: Store.Table, name: string, { nullable, type }: Store.Column) =>
  `${Dialect.snake(name)} ${types[type]}${nullable === true ? "" : " NOT NULL"}${
    type === "position"
      ? `\n    DEFAULT (lpad(pg_current_xact_id()::text, 20, '0') || lpad(nextval('${
        sequence(table, name)
      }')::text, 20, '0'))`
      : ""
  }`

/** PostgreSQL's rendering of a descriptor. */
export const renderer: Ddl.Renderer = {
  createTable: (table) => {
    const columns = [
      `uid text COLLATE "C" NOT NULL`,
      `parent text COLLATE "C"`,
      ...Object.entries(table.columns).map(([name, declared]) => column(table, name, declared)),
      `CONSTRAINT ${Dialect.constraintName(table.name, ["uid"])} PRIMARY KEY (uid)`
    ]
    const sequences = Object.entries(table.columns).flatMap(([name, declared]) =>
      declared.type === "position" ? [`CREATE SEQUENCE ${sequence(table, name)}`] : []
    )
    return [...sequences, `CREATE TABLE ${table.name} (\n  ${columns.join(",\n  ")}\n)`]
  },
  addColumn: (table, name) => `ALTER TABLE ${table.name} ADD COLUMN ${column(table, name, table.columns[name]!)}`,
  createUnique: (table, columns) =>
    `CREATE UNIQUE INDEX ${Dialect.constraintName(table.name, columns)} ON ${table.name} (${
      columns.map(Dialect.snake).join(", ")
    })${columns.includes("parent") ? " NULLS NOT DISTINCT" : ""}`,
  createIndex: (table, columns) =>
    `CREATE INDEX ${table.name}__${columns.map(Dialect.snake).join("__")} ON ${table.name} (${
      [...columns.map(Dialect.snake), "uid"].join(", ")
    })`,
  ownColumns: () => []
}

/** What the database holds: each table's columns (type, collation, null, default) and its indexes' definitions. */
export const catalog: Effect.Effect<Ddl.Catalog, unknown, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const columns = yield* sql<
    { table: string; name: string; type: string; nullable: string; collation: string | null; fallback: string | null }
  >`
    SELECT table_name AS table, column_name AS name, data_type AS type, is_nullable AS nullable,
      collation_name AS collation, column_default AS fallback
    FROM information_schema.columns
    WHERE table_schema = current_schema() AND table_name != 'arbor_migrations'
    ORDER BY table_name, ordinal_position`
  const indexes = yield* sql<{ table: string; name: string; definition: string }>`
    SELECT tablename AS table, indexname AS name, indexdef AS definition FROM pg_indexes
    WHERE schemaname = current_schema() AND tablename != 'arbor_migrations' ORDER BY indexname`
  const tables: Record<string, { columns: Array<readonly [string, string]>; indexes: Record<string, string> }> = {}
  const of = (name: string) => (tables[name] ??= { columns: [], indexes: {} })
  for (const c of columns) {
    of(c.table).columns.push([
      c.name,
      [
        c.type,
        c.collation === null ? "" : `COLLATE "${c.collation}"`,
        c.nullable === "NO" ? "NOT NULL" : "",
        c.fallback === null ? "" : `DEFAULT ${c.fallback}`
      ].filter((part) => part !== "").join(" ")
    ])
  }
  for (const index of indexes) of(index.table).indexes[index.name] = index.definition
  return tables
})
