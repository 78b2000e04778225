/** What both halves of SCIM provisioning ask of an organization: its owner bindings, and a provider's live users. */
import type { Repository } from "../../engine/Repository.js"
import type { Condition } from "../../engine/Store.js"
import type * as Uid from "../../engine/Uid.js"
import { ownerRole } from "../../iam/internal/ownership.js"
import type * as RoleBinding from "../../iam/RoleBinding.js"

/** The `owner` bindings at `organization`. */
export const ownerBindings = (bindings: Repository<RoleBinding.Record>, organization: Uid.Uid) =>
  bindings.find({
    conditions: [
      { _tag: "Equals", column: "parent", value: organization },
      { _tag: "Equals", column: "roleUid", value: ownerRole }
    ],
    order: [{ column: "uid", direction: "asc" }]
  })

/** The provider's users, those deleted left out. */
export const live = (provider: Uid.Uid): ReadonlyArray<Condition> => [
  { _tag: "Equals", column: "parent", value: provider },
  { _tag: "Equals", column: "deleted", value: false }
]
