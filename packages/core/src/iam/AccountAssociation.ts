/**
 * Account associations: the cloud accounts (AWS, Google Cloud, Azure) a group trusts. At most one per group; its
 * uid is the group's uid.
 */
import * as Schema from "effect/Schema"
import { OptionalDescription, RequiredName, Timestamp } from "../engine/internal/fields.js"
import type { Table } from "../engine/Store.js"
import { Uid } from "../engine/Uid.js"
import * as ChangeLog from "../events/ChangeLog.js"
import * as Capability from "./Capability.js"

/** The capability each operation needs (docs/api.md §7). */
export const permissions = Capability.operations("account_associations")

const matching = (pattern: RegExp, description: string) =>
  Schema.String.pipe(Schema.filter((s) => pattern.test(s), { message: () => description }))

const Uuid = matching(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/, "must be a UUID")

/** An AWS account. */
export const Amazon = Schema.Struct({ account: matching(/^\d{12}$/, "must be a 12-digit AWS account id") })

/** A Google Cloud project. */
export const Google = Schema.Struct({
  projectId: matching(/^[a-z][a-z0-9-]{4,28}[a-z0-9]$/, "must be a Google Cloud project id"),
  projectNumber: Schema.optionalWith(matching(/^\d{1,20}$/, "must be a project number"), { default: () => "" })
})

/** An Azure tenant and its application client ids, by name. */
export const Azure = Schema.Struct({
  tenantId: Uuid,
  clientIds: Schema.optionalWith(
    Schema.Record({ key: Schema.String, value: Uuid }).pipe(
      Schema.filter((r) => Object.keys(r).length <= 32 || "may hold at most 32 client ids")
    ),
    { default: () => ({}) }
  )
})

/** An account association. */
export class AccountAssociation extends Schema.Class<AccountAssociation>("@arbor/core/AccountAssociation")({
  uid: Uid,
  name: Schema.String,
  description: Schema.String,
  amazon: Schema.optionalWith(Schema.encodedSchema(Amazon), { nullable: true, exact: true }),
  google: Schema.optionalWith(Schema.encodedSchema(Google), { nullable: true, exact: true }),
  azure: Schema.optionalWith(Schema.encodedSchema(Azure), { nullable: true, exact: true }),
  createTime: Timestamp,
  updateTime: Timestamp
}) {}

/** What a caller gives to create an account association: a name, and any of the three clouds. */
export const CreateAccountAssociation = Schema.Struct({
  name: RequiredName,
  description: OptionalDescription,
  amazon: Schema.optionalWith(Amazon, { exact: true }),
  google: Schema.optionalWith(Google, { exact: true }),
  azure: Schema.optionalWith(Azure, { exact: true })
})
export type CreateAccountAssociation = typeof CreateAccountAssociation.Encoded

/** Fields an update may change. */
export const fields = {
  mutable: ["name", "description", "amazon", "google", "azure"],
  immutable: [],
  outputOnly: ["uid", "createTime", "updateTime"]
} as const

/** How account associations are stored. */
export const table: Table = {
  name: "account_associations",
  // An account association's uid is its group's.
  events: ChangeLog.logged("account_association", "dev.chainguard.api.iam.account_associations", {
    groupOf: (uid) => uid
  }),
  columns: {
    name: { type: "text" },
    description: { type: "text" },
    amazon: { type: "json", nullable: true },
    google: { type: "json", nullable: true },
    azure: { type: "json", nullable: true },
    createTime: { type: "integer" },
    updateTime: { type: "integer" }
  },
  unique: [],
  indexes: [["parent"], ["name"], ["createTime"], ["updateTime"]]
}
