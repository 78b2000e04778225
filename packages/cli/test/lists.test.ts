/**
 * Every list's declared query reaches the command line and the reference: each filter of each resource's declaration
 * (`@arbor/api/Resources`) is a flag of its `arbor … list` command, and each parameter is named in docs/api.md.
 * Adding a filter and missing either fails here. (The gRPC requests are walked in `@arbor/http`'s
 * `declarations.test.ts`.)
 */
import * as ListQuery from "@arbor/api/ListQuery"
import * as Resources from "@arbor/api/Resources"
import * as Schema from "effect/Schema"
import { execFile } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { promisify } from "node:util"
import { assert, describe, it } from "vitest"
import { executable } from "./globalSetup.js"

/** Every declaration of a resource with a list. */
const declarations = Object.values(Resources).flatMap((value) =>
  typeof value === "object" && "query" in value && Schema.isSchema(value.query) && "proto" in value &&
    typeof value.name === "string"
    ? [{ name: value.name, query: value.query }]
    : []
)

/**
 * The command that lists each resource, and the flags it names in a person's words, by parameter (the others are the
 * parameter's name without `uidp.`, dashed, and `--parent` for `uidp.descendants_of`).
 */
const commands: Readonly<
  Record<string, { readonly command: ReadonlyArray<string>; readonly flags?: Readonly<Record<string, string>> }>
> = {
  groups: { command: ["iam", "folders"] },
  identities: { command: ["iam", "identities"], flags: { relationship_type: "kind" } },
  roles: { command: ["iam", "roles"] },
  roleBindings: { command: ["iam", "role-bindings"] },
  identityProviders: { command: ["iam", "identity-providers"] },
  accountAssociations: { command: ["iam", "account-associations"] },
  groupInvites: { command: ["iam", "invites"] },
  externalGroupRoleMappings: {
    command: ["iam", "external-group-role-mappings"],
    flags: { identity_provider_uid: "provider" }
  },
  subscriptions: { command: ["events", "subscriptions"] },
  repos: { command: ["images", "repos"] },
  tags: { command: ["images", "tags"], flags: { "uidp.children_of": "repo" } },
  advisories: { command: ["advisories"], flags: { package_names: "package" } }
}

const flagName = (parameter: string) =>
  parameter === "uidp.descendants_of" ? "parent" : parameter.replace(/^uidp\./, "").replaceAll("_", "-")

describe("list queries, on the command line and in the reference", () => {
  it("each filter is a flag of its list command; each parameter is named in docs/api.md", async () => {
    const docs = readFileSync(join(import.meta.dirname, "../../../docs/api.md"), "utf8")
    assert.isAtLeast(declarations.length, 12)
    const missing: Array<string> = []
    for (const { name, query } of declarations) {
      const listing = commands[name]
      if (listing === undefined) {
        missing.push(`${name}: no list command`)
        continue
      }
      const { stdout } = await promisify(execFile)(
        process.execPath,
        [executable, ...listing.command, "list", "--help"],
        { encoding: "utf8", env: { PATH: process.env.PATH!, NO_COLOR: "1" } }
      )
      for (const parameter of ListQuery.parameters(query)) {
        if (!docs.includes(`\`${parameter.name}\``)) missing.push(`docs/api.md: ${parameter.name}`)
        if (ListQuery.pagingParameters.has(parameter.name)) continue
        const flag = `--${listing.flags?.[parameter.name] ?? flagName(parameter.name)}`
        if (!stdout.includes(flag)) missing.push(`arbor ${listing.command.join(" ")} list ${flag}`)
      }
    }
    assert.deepStrictEqual(missing, [])
  }, 60_000)
})
