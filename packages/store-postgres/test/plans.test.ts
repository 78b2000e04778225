/**
 * Query plans: the store's list statements can be index scans in the requested order (no sort, no full scan) for
 * the access paths the engine uses, checked with EXPLAIN on the exact statements the store runs. Sequential scans
 * and sorts are priced out first, so that a plan with either means that no index serves the statement.
 */
import type { Store } from "@arbor/core"
import { Group, Role, RoleBinding, Tag, Uid } from "@arbor/core"
import { SqlStore } from "@arbor/store-sql"
import * as SqlClient from "@effect/sql/SqlClient"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { freshStore } from "./databases.js"

const org = "0123456789abcdef0123456789abcdef01234567"
const team = `${org}/0123456789abcdef`
const byUid: ReadonlyArray<Store.OrderKey> = [{ column: "uid", direction: "asc" }]
const desc = (
  column: string
): ReadonlyArray<Store.OrderKey> => [{ column, direction: "desc" }, { column: "uid", direction: "desc" }]

/** The plan of a statement, with sequential scans and sorts priced out. */
const plan = (statement: { compile: () => readonly [string, ReadonlyArray<unknown>] }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [text, params] = statement.compile()
    return yield* sql.withTransaction(Effect.gen(function*() {
      yield* sql`SET LOCAL enable_seqscan = off`
      yield* sql`SET LOCAL enable_sort = off`
      const rows = yield* sql.unsafe<{ "QUERY PLAN": string }>(`EXPLAIN ${text}`, params)
      return rows.map((r) => r["QUERY PLAN"]).join("\n")
    }))
  })

describe("query plans", () => {
  it.live("lists scan an index in the requested order; counts use an index", () =>
    Effect.gen(function*() {
      const store = yield* SqlStore.SqlStore
      const cases: ReadonlyArray<readonly [string, Store.Table, Store.Query, RegExp]> = [
        [
          "descendants, by uid",
          Group.table,
          { ranges: [Uid.descendants(team)], order: byUid, limit: 51 },
          /groups__pkey/
        ],
        ["a page after a token, by uid", Group.table, { order: byUid, after: [team], limit: 51 }, /groups__pkey/],
        ["children, by uid", Group.table, {
          conditions: [{ _tag: "Equals", column: "parent", value: team }],
          order: byUid,
          limit: 51
        }, /groups__parent/],
        ["everything, by name descending", Group.table, { order: desc("name"), limit: 51 }, /Backward.*groups__name/],
        ["after a token, by create time descending", Group.table, {
          order: desc("createTime"),
          after: [5, team],
          limit: 51
        }, /groups__create_time/],
        ["an identity's bindings", RoleBinding.table, {
          conditions: [{ _tag: "Equals", column: "identityUid", value: `${team}/1111111111111111` }],
          order: byUid
        }, /role_bindings__identity_uid/],
        ["a role's bindings", RoleBinding.table, {
          conditions: [{ _tag: "Equals", column: "roleUid", value: Role.builtInByName("viewer")!.uid }],
          order: byUid,
          limit: 1
        }, /role_bindings__role_uid/],
        ["a repo's tags by name", Tag.table, {
          conditions: [{ _tag: "Equals", column: "parent", value: team }],
          order: [{ column: "name", direction: "asc" }, { column: "uid", direction: "asc" }],
          limit: 51
        }, /tags__parent__name/],
        ["children, by name", Group.table, {
          conditions: [{ _tag: "Equals", column: "parent", value: team }],
          order: [{ column: "name", direction: "asc" }, { column: "uid", direction: "asc" }],
          after: ["m", `${team}/1111111111111111`],
          limit: 51
        }, /groups__parent__name/]
      ]
      for (const [name, table, query, expected] of cases) {
        const found = yield* plan(store.statements.find(table, query))
        assert.match(found, expected, `${name}:\n${found}`)
        assert.notMatch(found, /Seq Scan|Sort/, `${name} scans or sorts:\n${found}`)
      }
      const count = yield* plan(store.statements.count(Group.table, { ranges: [Uid.descendants(team)] }))
      assert.match(count, /Index Only Scan|Index Scan/, count)
      assert.notMatch(count, /Seq Scan/, count)
    }).pipe(Effect.provide(freshStore())))
})
