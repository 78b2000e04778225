/**
 * Roles: named sets of capabilities. Built-in roles are root-level, have the same uid in every installation and
 * are readable by every caller; custom roles live in a group.
 */
import * as Schema from "effect/Schema"
import { OptionalDescription, RequiredName, Timestamp } from "../engine/internal/fields.js"
import * as Versions from "../engine/internal/storage/versions.js"
import type { Table } from "../engine/Store.js"
import type { Uid as UidType } from "../engine/Uid.js"
import { Uid } from "../engine/Uid.js"
import * as ChangeLog from "../events/ChangeLog.js"
import type { Capability as CapabilityName } from "./Capability.js"
import { all as allCapabilities, Capability, normalize, operations } from "./Capability.js"

/** The capability each operation needs (docs/api.md §7). */
export const permissions = operations("roles")

/** A role. */
export class Role extends Schema.Class<Role>("@arbor/core/Role")({
  uid: Uid,
  name: Schema.String,
  description: Schema.String,
  capabilities: Schema.Array(Schema.Literal(...allCapabilities)),
  createTime: Timestamp,
  updateTime: Timestamp
}) {
  /** True for a built-in role. */
  get builtIn(): boolean {
    return builtInByUid.has(this.uid)
  }
}

/** A non-empty list of capabilities in either spelling, decoded distinct and in canonical order. */
const Capabilities = Schema.transform(
  Schema.Array(Capability).pipe(
    Schema.filter((caps) => caps.length > 0 || "must list at least one capability"),
    Schema.filter((caps) => caps.length <= allCapabilities.length * 2 || "lists too many capabilities")
  ),
  Schema.Array(Schema.Literal(...allCapabilities)),
  { strict: true, decode: normalize, encode: (caps) => caps }
)

/** What a caller gives to create a role; capabilities in either spelling. */
export const CreateRole = Schema.Struct({
  name: RequiredName,
  description: OptionalDescription,
  capabilities: Capabilities
})
export type CreateRole = typeof CreateRole.Encoded

/** Fields an update may change. */
export const fields = {
  mutable: ["name", "description", "capabilities"],
  immutable: [],
  outputOnly: ["uid", "createTime", "updateTime"]
} as const

/** How roles are stored. */
export const table: Table = {
  name: "roles",
  events: ChangeLog.logged("role", "dev.chainguard.api.iam.roles"),
  columns: {
    name: { type: "text" },
    description: { type: "text" },
    capabilities: { type: "json" },
    createTime: { type: "integer" },
    updateTime: { type: "integer" }
  },
  roots: true,
  unique: [["parent", "name"]],
  indexes: [["parent", "name"], ["parent"], ["name"], ["createTime"], ["updateTime"]],
  versions: [Versions.grants]
}

/** A built-in role's definition. */
export interface BuiltIn {
  readonly uid: UidType
  readonly name: string
  readonly description: string
  readonly capabilities: ReadonlyArray<CapabilityName>
}

const lists = allCapabilities.filter((c) => c.endsWith(".list"))
const registry = allCapabilities.filter((c) => c.startsWith("repo.") || c.startsWith("tag."))
const pull: ReadonlyArray<CapabilityName> = ["groups.list", "repo.list", "tag.list"]

const builtIn = (uid: string, name: string, label: string, capabilities: ReadonlyArray<CapabilityName>): BuiltIn => ({
  uid: uid as UidType,
  name,
  description: `${label} Role (built-in)`,
  capabilities: normalize(capabilities)
})

/** The built-in roles; their uids are fixed across installations. */
export const builtIns: ReadonlyArray<BuiltIn> = [
  builtIn("250dd1df10cffdccfa9b4aedaa4e2ebf9146935b", "owner", "Owner", allCapabilities),
  builtIn("298fe2e36a380cda9d8f00e56162c09e992fd816", "editor", "Editor", [...lists, ...registry]),
  builtIn("cbface5d58f52d0ef8b668e8a94f5da62ed3a21b", "viewer", "Viewer", lists),
  builtIn("0b6f960be84976316c029fea6f7af581f3e6b7e3", "registry.pull", "Registry Pull", pull),
  builtIn("d107b0ea5eb77de08f6853d02d12688c6b6f3353", "registry.push", "Registry Push", [...pull, ...registry]),
  builtIn("767f04322f063d098b69d236c38922d445df4e95", "registry.pull_token_creator", "Registry Pull Token Creator", [
    "identity.create",
    "role_bindings.create",
    "roles.list",
    "groups.list"
  ])
]

const builtInByUid: ReadonlyMap<string, BuiltIn> = new Map(builtIns.map((r) => [r.uid, r]))

/** The built-in role with that name. */
export const builtInByName = (name: string): BuiltIn | undefined => builtIns.find((r) => r.name === name)

/** The built-in role with that uid. */
export const builtInOf = (uid: string): BuiltIn | undefined => builtInByUid.get(uid)

/** True when `uid` is a built-in role's. */
export const isBuiltIn = (uid: string): boolean => builtInByUid.has(uid)
