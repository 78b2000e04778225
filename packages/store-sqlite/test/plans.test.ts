/**
 * Query plans: the store's list statements are index seeks (no full scans, no sorting) for the access paths the
 * engine uses, checked with EXPLAIN QUERY PLAN on the exact statements the store runs.
 */
import type { Store } from "@arbor/core"
import { Group, Role, RoleBinding, Tag, Uid } from "@arbor/core"
import { SqlStore } from "@arbor/store-sql"
import * as SqlClient from "@effect/sql/SqlClient"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { SqliteStore } from "../src/index.js"

const org = "0123456789abcdef0123456789abcdef01234567"
const team = `${org}/0123456789abcdef`
const byUid: ReadonlyArray<Store.OrderKey> = [{ column: "uid", direction: "asc" }]
const desc = (
  column: string
): ReadonlyArray<Store.OrderKey> => [{ column, direction: "desc" }, { column: "uid", direction: "desc" }]

/** The plan of a statement, one line per step. */
const plan = (statement: { compile: () => readonly [string, ReadonlyArray<unknown>] }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [text, params] = statement.compile()
    const rows = yield* sql.unsafe<{ detail: string }>(`EXPLAIN QUERY PLAN ${text}`, params)
    return rows.map((r) => r.detail).join("\n")
  })

describe("query plans", () => {
  it.effect("lists seek an index in the requested order; counts use an index", () =>
    Effect.gen(function*() {
      const store = yield* SqlStore.SqlStore
      const cases: ReadonlyArray<readonly [string, Store.Table, Store.Query, RegExp]> = [
        [
          "descendants, by uid",
          Group.table,
          { ranges: [Uid.descendants(team)], order: byUid, limit: 51 },
          /SEARCH groups USING PRIMARY KEY \(uid>\? AND uid<\?\)/
        ],
        [
          "a page after a token, by uid",
          Group.table,
          { order: byUid, after: [team], limit: 51 },
          /SEARCH groups USING PRIMARY KEY \(uid>\?\)/
        ],
        ["children, by uid", Group.table, {
          conditions: [{ _tag: "Equals", column: "parent", value: team }],
          order: byUid,
          limit: 51
        }, /USING (COVERING )?INDEX groups__parent \(parent=\?/],
        [
          "everything, by name descending",
          Group.table,
          { order: desc("name"), limit: 51 },
          /SCAN groups USING (COVERING )?INDEX groups__name/
        ],
        ["after a token, by create time descending", Group.table, {
          order: desc("createTime"),
          after: [5, team],
          limit: 51
        }, /SEARCH groups USING (COVERING )?INDEX groups__create_time \(/],
        ["an identity's bindings", RoleBinding.table, {
          conditions: [{ _tag: "Equals", column: "identityUid", value: `${team}/1111111111111111` }],
          order: byUid
        }, /SEARCH role_bindings USING (COVERING )?INDEX role_bindings__identity_uid \(identity_uid=\?\)/],
        ["a role's bindings", RoleBinding.table, {
          conditions: [{ _tag: "Equals", column: "roleUid", value: Role.builtInByName("viewer")!.uid }],
          order: byUid,
          limit: 1
        }, /INDEX role_bindings__role_uid/],
        ["a repo's tags by name", Tag.table, {
          conditions: [{ _tag: "Equals", column: "parent", value: team }],
          order: [{ column: "name", direction: "asc" }, { column: "uid", direction: "asc" }],
          limit: 51
        }, /INDEX tags__(unique__parent__name|parent)|INDEX tags__name/]
      ]
      for (const [name, table, query, expected] of cases) {
        const found = yield* plan(store.statements.find(table, query))
        assert.match(found, expected, `${name}:\n${found}`)
        assert.notMatch(found, /TEMP B-TREE/, `${name} sorts:\n${found}`)
      }
      // Several visibility ranges in uid order are paged range by range, each a seek.
      const ranges = [Uid.subtree(`${org}/1111111111111111`), Uid.subtree(team)]
      for (const range of ranges) {
        const found = yield* plan(store.statements.find(Group.table, { ranges: [range], order: byUid, limit: 51 }))
        assert.match(found, /^SEARCH groups USING PRIMARY KEY \(uid>\? AND uid<\?\)$/, found)
      }
      const count = yield* plan(store.statements.count(Group.table, { ranges: [Uid.descendants(team)] }))
      assert.match(count, /USING (COVERING )?INDEX|PRIMARY KEY/, count)
    }).pipe(Effect.provide(SqliteStore.layer({ filename: ":memory:" }))))

  it.effect("a count of a whole table is SQLite's page count, not a test of every row", () =>
    Effect.gen(function*() {
      const store = yield* SqlStore.SqlStore
      const sql = yield* SqlClient.SqlClient
      const [text, params] = store.statements.count(Group.table, {}).compile()
      const program = yield* sql.unsafe<{ opcode: string }>(`EXPLAIN ${text}`, params)
      const opcodes = program.map((step) => step.opcode)
      assert.include(opcodes, "Count", opcodes.join(" "))
      assert.notInclude(opcodes, "Next", opcodes.join(" "))
    }).pipe(Effect.provide(SqliteStore.layer({ filename: ":memory:" }))))
})
