/**
 * An adapter's migrations as numbered files (`src/migrations/0001_initial.ts`, one per migration, each exporting its
 * `statements`), as OpenFGA keeps numbered `.sql` files per database, and the index that loads them
 * (`src/migrations/index.ts`, written from the folder: never by hand). A new migration is written from the table
 * descriptors: the adapter's schema test plans what they need beyond the migrations (`Ddl.plan`) and, given
 * `ARBOR_NEW_MIGRATION=<name>`, writes those statements as the next numbered file and the index again (`write`).
 * Development only: nothing here runs in a server.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"

/** A migration file's name: its four-digit number and its name in snake case. */
const fileName = /^(\d{4})_([a-z0-9_]+)\.ts$/

/** The migration files of `folder`, in order: `0001_initial`, … (without `.ts`). */
export const ids = (folder: string): Array<string> =>
  readdirSync(folder).filter((file) => fileName.test(file)).sort().map((file) => file.slice(0, -".ts".length))

/** The index of `ids`, as `write` writes it: each file imported, the migrations by id. */
export const indexSource = (ids: ReadonlyArray<string>): string =>
  [
    "// @generated from the numbered files beside it (`MigrationFiles` in @arbor/store-sql): not edited by hand.",
    `import { Migrations } from "@arbor/store-sql"`,
    ...ids.map((id) => `import * as m${id.slice(0, 4)} from "./${id}.js"`),
    "",
    "/** The migrations, by `<id>_<name>`, each frozen once released. */",
    "export const migrations: Migrations.Migrations = {",
    ...ids.map((id, i) =>
      `  "${id}": Migrations.statements(m${id.slice(0, 4)}.statements)${i < ids.length - 1 ? "," : ""}`
    ),
    "}",
    ""
  ].join("\n")

/** What is wrong with the numbered files of `folder`: a gap in the numbers, or an index not written from them. */
export const problems = (folder: string): Array<string> => {
  const found = ids(folder)
  const gaps = found.flatMap((id, i) =>
    Number(id.slice(0, 4)) === i + 1 ? [] : [`${id}: migration ${i + 1} expected here`]
  )
  const index = readFileSync(join(folder, "index.ts"), "utf8")
  return [
    ...gaps,
    ...(index === indexSource(found) ? [] : ["index.ts is not the index of the numbered files: write it again"])
  ]
}

/** Writes `statements` as the next numbered migration of `folder`, named `name`, and the index again; its id. */
export const write = (folder: string, name: string, statements: ReadonlyArray<string>): string => {
  if (!/^[a-z0-9_]+$/.test(name)) throw new Error(`a migration's name is snake case: ${name}`)
  const id = `${String(ids(folder).length + 1).padStart(4, "0")}_${name}`
  const literal = (statement: string) => `  \`${statement.replace(/[`\\]/g, "\\$&").replace(/\$\{/g, "\\${")}\``
  writeFileSync(
    join(folder, `${id}.ts`),
    `/** Migration ${Number(id.slice(0, 4))}: ${name.replace(/_/g, " ")}, written from the table descriptors. */\n` +
      `export const statements = [\n${statements.map(literal).join(",\n")}\n]\n`
  )
  writeFileSync(join(folder, "index.ts"), indexSource(ids(folder)))
  return id
}

/**
 * What a schema test says of the statements the descriptors need beyond the migrations (`Ddl.plan`): nothing when
 * there are none; else, with `ARBOR_NEW_MIGRATION=<name>`, that it wrote them as the next migration of `folder`
 * (run the tests again), or, without it, how to.
 */
export const pending = (folder: string, statements: ReadonlyArray<string>): string | undefined => {
  if (statements.length === 0) return undefined
  const name = process.env.ARBOR_NEW_MIGRATION
  if (name === undefined || name === "") {
    return `the table descriptors need a migration the numbered files lack (ARBOR_NEW_MIGRATION=<name> writes it)`
  }
  return `wrote migrations/${write(folder, name, statements)}.ts from the table descriptors: run the tests again`
}
