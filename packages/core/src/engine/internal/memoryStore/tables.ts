/**
 * The in-memory store's tables: each a persistent order-statistic tree of rows by uid, and one per index (declared
 * unique keys and indexes) keyed by the index's columns then the uid; rows in and out of them, and the unique checks.
 */
import * as Effect from "effect/Effect"
import createTree from "functional-red-black-tree"
import type { Tree } from "functional-red-black-tree"
import type { Condition, Row, Scalar, Table } from "../../Store.js"
import { compareScalars, compareText, UniqueViolation } from "../../Store.js"

/** Sorts after every scalar; closes a prefix range in an index. */
export const TOP: unique symbol = Symbol("TOP")
export type KeyPart = Scalar | typeof TOP
export type Key = ReadonlyArray<KeyPart>

const compareParts = (a: KeyPart, b: KeyPart): number =>
  a === TOP ? (b === TOP ? 0 : 1) : b === TOP ? -1 : compareScalars(a, b)

export const compareKeys = (a: Key, b: Key): number => {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    const c = compareParts(a[i]!, b[i]!)
    if (c !== 0) return c
  }
  return a.length - b.length
}

export const compareStrings = compareText

export interface Index {
  readonly columns: ReadonlyArray<string>
  readonly unique: boolean
  readonly tree: Tree<Key, Row>
}

export interface TableState {
  readonly rows: Tree<string, Row>
  readonly indexes: ReadonlyArray<Index>
}

export type State = ReadonlyMap<string, TableState>

export const sameColumns = (a: ReadonlyArray<string>, b: ReadonlyArray<string>) =>
  a.length === b.length && a.every((c, i) => c === b[i])

export const emptyTable = (table: Table): TableState => {
  const indexes: Array<Index> = []
  const add = (columns: ReadonlyArray<string>, unique: boolean) => {
    const existing = indexes.findIndex((i) => sameColumns(i.columns, columns))
    if (existing >= 0) {
      if (unique) indexes[existing] = { ...indexes[existing]!, unique }
      return
    }
    indexes.push({ columns, unique, tree: createTree<Key, Row>(compareKeys) })
  }
  for (const u of table.unique) add(u, true)
  for (const i of table.indexes) add(i, false)
  return { rows: createTree<string, Row>(compareStrings), indexes }
}

export const indexKey = (index: Index, row: Row): Key => [...index.columns.map((c) => row[c] as Scalar), row.uid]

export const normalize = (table: Table, row: Row): Row => {
  const out: Record<string, unknown> = { uid: row.uid, parent: row.parent ?? null }
  for (const column of Object.keys(table.columns)) out[column] = row[column] ?? null
  return out as Row
}

export const rangeSize = <K, V>(tree: Tree<K, V>, from: K, to: K): number => tree.ge(to).index - tree.ge(from).index

/** The prefix of an index's columns fixed by `Equals` conditions, and the values they are fixed to. */
export const equalityPrefix = (index: Index, conditions: ReadonlyArray<Condition>): Array<Scalar> => {
  const values: Array<Scalar> = []
  for (const column of index.columns) {
    const c = conditions.find((c) => c._tag === "Equals" && c.column === column)
    if (c === undefined || c._tag !== "Equals") break
    values.push(c.value)
  }
  return values
}

/** Fails when `row` would repeat another row's values of a unique key. */
export const checkUnique = (table: Table, ts: TableState, row: Row): Effect.Effect<void, UniqueViolation> => {
  for (const index of ts.indexes) {
    if (!index.unique) continue
    const prefix = index.columns.map((c) => row[c] as Scalar)
    const to: Key = [...prefix, TOP]
    for (const it = index.tree.ge(prefix); it.valid && compareKeys(it.key!, to) < 0; it.next()) {
      if (it.value!.uid !== row.uid) {
        return Effect.fail(new UniqueViolation({ table: table.name, columns: [...index.columns] }))
      }
    }
  }
  return Effect.void
}

/** The table without `row`, in its rows and every index. */
export const withoutRow = (ts: TableState, row: Row): TableState => ({
  rows: ts.rows.remove(row.uid),
  indexes: ts.indexes.map((index) => ({ ...index, tree: index.tree.remove(indexKey(index, row)) }))
})

/** The table with `row`, in its rows and every index. */
export const withRow = (ts: TableState, row: Row): TableState => ({
  rows: ts.rows.insert(row.uid, row),
  indexes: ts.indexes.map((index) => ({ ...index, tree: index.tree.insert(indexKey(index, row), row) }))
})

/** The state with `table` replaced. */
export const setTable = (state: State, table: Table, ts: TableState): State => new Map(state).set(table.name, ts)
