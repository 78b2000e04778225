/**
 * The kinds of resource a decision may be asked about (`AccessEvaluation.resourceTypes`): where each is stored, and
 * what lists it (DECISIONS §21: a search answers a subset of what its caller may list).
 */
import type { Table } from "../../engine/Store.js"
import * as Subscription from "../../events/Subscription.js"
import * as Repo from "../../registry/Repo.js"
import * as Tag from "../../registry/Tag.js"
import type * as AccessEvaluation from "../AccessEvaluation.js"
import * as AccountAssociation from "../AccountAssociation.js"
import type { Capability } from "../Capability.js"
import * as ExternalGroupRoleMapping from "../ExternalGroupRoleMapping.js"
import * as Group from "../Group.js"
import * as GroupInvite from "../GroupInvite.js"
import * as Identity from "../Identity.js"
import * as IdentityProvider from "../IdentityProvider.js"
import * as Role from "../Role.js"
import * as RoleBinding from "../RoleBinding.js"

/** A kind of resource: its table, the capability that lists it, and whether that shows its group itself or below. */
export interface ResourceKind {
  readonly table: Table
  readonly list: Capability
  readonly visibleAt: "self" | "parent"
}

const kind = (
  table: Table,
  permissions: { readonly list: Capability },
  visibleAt: "self" | "parent" = "parent"
): ResourceKind => ({ table, list: permissions.list, visibleAt })

/** Each kind of resource a decision may be asked about. */
export const resourceKinds: Readonly<Record<AccessEvaluation.ResourceType, ResourceKind>> = {
  group: kind(Group.table, Group.permissions, "self"),
  identity: kind(Identity.table, Identity.permissions),
  role: kind(Role.table, Role.permissions),
  role_binding: kind(RoleBinding.table, RoleBinding.permissions),
  identity_provider: kind(IdentityProvider.table, IdentityProvider.permissions),
  account_association: kind(AccountAssociation.table, AccountAssociation.permissions, "self"),
  group_invite: kind(GroupInvite.table, GroupInvite.permissions),
  external_group_role_mapping: kind(ExternalGroupRoleMapping.table, ExternalGroupRoleMapping.permissions),
  repo: kind(Repo.table, Repo.permissions),
  tag: kind(Tag.table, Tag.permissions),
  subscription: kind(Subscription.table, Subscription.permissions)
}
