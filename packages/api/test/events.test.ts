/**
 * The change log's event types (DECISIONS §14) are the reference protos': each write method's
 * `chainguard.annotations.events` type is the one its resource declares beside its table, and the writes the protos
 * name none for are listed in docs/api.md.
 */
import {
  AccountAssociation,
  Advisory,
  ExternalGroupRoleMapping,
  Group,
  GroupInvite,
  Identity,
  IdentityProvider,
  Repo,
  Role,
  RoleBinding,
  Subscription,
  Tag,
  TermsAcceptance
} from "@arbor/core"
import type { Table } from "@arbor/core/Store"
import { assert, describe, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import protobuf from "protobufjs"
import * as Resources from "../src/Resources.js"

const root = join(import.meta.dirname, "..")

/** Each served resource's declaration, and the table its writes go to. */
const served: ReadonlyArray<
  readonly [{ readonly proto: { readonly service: string; readonly message: string } }, Table]
> = [
  [Resources.groups, Group.table],
  [Resources.identities, Identity.table],
  [Resources.roles, Role.table],
  [Resources.roleBindings, RoleBinding.table],
  [Resources.identityProviders, IdentityProvider.table],
  [Resources.accountAssociations, AccountAssociation.table],
  [Resources.groupInvites, GroupInvite.table],
  [Resources.repos, Repo.table],
  [Resources.tags, Tag.table],
  [Resources.advisories, Advisory.table],
  [Resources.subscriptions, Subscription.table],
  [Resources.externalGroupRoleMappings, ExternalGroupRoleMapping.table]
]

const operations = ["created", "updated", "deleted"] as const
const verbs = { created: "Create", updated: "Update", deleted: "Delete" } as const

describe("the change log's event types", () => {
  it("every resource the API writes declares one per kind of write, in the protos' scheme", () => {
    for (const [declaration, table] of served) {
      assert.isDefined(table.events, table.name)
      for (const operation of operations) {
        assert.match(
          table.events!.types[operation],
          new RegExp(`^dev\\.chainguard\\.api\\.[a-z_.]+\\.${operation}\\.v1$`)
        )
      }
      assert.isString(declaration.proto.service)
    }
  })

  const reference = process.env.ARBOR_TEST_PROTOS
  it.runIf(reference !== undefined)(
    "are the reference protos' for every write they name; docs/api.md lists the rest",
    () => {
      const protos = new protobuf.Root()
      protos.resolvePath = (_, target) =>
        target === "google/protobuf/descriptor.proto"
          ? join(root, "node_modules", "protobufjs", target)
          : target.startsWith("google/protobuf/")
          ? target
          : join(reference!, target)
      const docs = readFileSync(join(root, "..", "..", "docs", "api.md"), "utf8")
      for (const [declaration, table] of served) {
        const file = `${declaration.proto.service.split(".").slice(0, -1).join("/")}/${
          readServiceFile(declaration.proto.service)
        }`
        protos.loadSync(file, { keepCase: true })
        const service = protos.lookupService(declaration.proto.service)
        const resource = declaration.proto.message.split(".").at(-1)!
        for (const operation of operations) {
          const method = service.methods[`${verbs[operation]}${resource}`]
          const named = method?.options?.["(chainguard.annotations.events).type"] as string | undefined
          if (named !== undefined) {
            assert.strictEqual(
              table.events!.types[operation],
              named,
              `${service.name}.${method!.name}`
            )
          } else {assert.include(
              docs,
              `\`${table.events!.types[operation]}\``,
              `${table.events!.types[operation]} is listed in docs/api.md`
            )}
        }
      }
      // A write of its own: the bindings a batch makes.
      const batch = protos.lookupService("chainguard.platform.iam.v2beta1.RoleBindingsService").methods
        .BatchCreateRoleBindings
      assert.strictEqual(batch?.options?.["(chainguard.annotations.events).type"], RoleBinding.batchCreatedType)
      const batchDelete = protos.lookupService("chainguard.platform.iam.v2beta1.ExternalGroupRoleMappingsService")
        .methods.BatchDeleteExternalGroupRoleMappings
      assert.strictEqual(
        batchDelete?.options?.["(chainguard.annotations.events).type"],
        ExternalGroupRoleMapping.batchDeletedType
      )
      // Terms are accepted, never created: AcceptTerms' type is an acceptance's; the other two are ours.
      protos.loadSync("chainguard/platform/iam/v2beta1/terms.proto", { keepCase: true })
      const accept = protos.lookupService("chainguard.platform.iam.v2beta1.TermsService").methods.AcceptTerms
      const terms = TermsAcceptance.table.events!.types
      assert.strictEqual(accept?.options?.["(chainguard.annotations.events).type"], terms.created)
      for (const type of [terms.updated, terms.deleted]) assert.include(docs, `\`${type}\``)
    }
  )
})

/** The reference's file that declares `service` (`chainguard.platform.iam.v2beta1.GroupsService` → `groups.proto`). */
const readServiceFile = (service: string) =>
  `${
    service.split(".").at(-1)!.replace(/Service$/, "").replace(/[A-Z]/g, (c, i: number) =>
      `${i === 0 ? "" : "_"}${c.toLowerCase()}`)
  }.proto`
