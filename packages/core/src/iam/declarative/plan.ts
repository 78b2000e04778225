/**
 * The steps that make an organization as a document says (`stepsOf`): creates, updates and, with `prune`, deletes,
 * each run later through the engine's services as the caller.
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { type ArborError, internal, InvalidArgument } from "../../engine/Errors.js"
import type * as Uid from "../../engine/Uid.js"
import * as Capability from "../Capability.js"
import * as Condition from "../Condition.js"
import * as OrganizationDocument from "../OrganizationDocument.js"
import { type IdentitySpec, type Organization } from "../OrganizationDocument.js"
import type { Principal } from "../Principal.js"
import * as Role from "../Role.js"
import type * as RoleBinding from "../RoleBinding.js"

import { foldersOf, isList, misnamedFolder } from "./document.js"
import {
  bindingKey,
  byKey,
  canonical,
  type Change,
  claimKey,
  claimMatchOf,
  etagOf,
  isEmpty,
  joined,
  keepsOwners,
  type MappedAs,
  mappingKey,
  type Options,
  type Planned,
  type Services,
  split,
  type Step,
  subscriptionKey,
  unknownSecret,
  wordsOf
} from "./model.js"
import type { Reader } from "./read.js"

/** The planning of IAM as code over `services` and what `read` reads. */
export const planner = (
  { groups, roles, identities, bindings, providers, mappings, subscriptions, vocabularies }: Services,
  { secretIs, stateOf }: Reader
) => {
  /** The steps that make organization `name` as `wanted` says; `at` is its path in the document. */
  const stepsOf = (
    principal: Principal,
    name: string,
    wanted: Organization,
    options: Options
  ): Effect.Effect<Planned, ArborError> =>
    Effect.gen(function*() {
      const at = `organizations.${name}`
      const prune = options.prune === true
      const state = yield* stateOf(principal, name)
      const creates: Array<Step> = []
      const updates: Array<Step> = []
      const deletes: Array<Step> = []
      /** With `prune`, a delete of each of `existing` that `wanted` leaves out. */
      const pruning = <A>(
        existing: Iterable<readonly [string, A]>,
        wanted: { readonly has: (key: string) => boolean },
        kind: Change["kind"],
        pathOf: (key: string, resource: A) => string,
        remove: (resource: A) => Effect.Effect<unknown, ArborError>,
        binding?: (resource: A) => RoleBinding.RoleBinding
      ) => {
        if (!prune) return
        for (const [key, resource] of existing) {
          if (wanted.has(key)) continue
          deletes.push({
            change: { action: "delete", kind, path: pathOf(key, resource) },
            run: () => remove(resource),
            binding: binding?.(resource)
          })
        }
      }
      const full = (path: string) => path === "" ? name : joined(name, path)
      const uidOf = (uids: Map<string, Uid.Uid>, path: string) =>
        Effect.suspend(() => {
          const uid = uids.get(path)
          return uid === undefined
            ? internal(`the plan made no ${path}`, "PLAN")
            : Effect.succeed(uid)
        })
      const description = (text: string | undefined) => text === undefined ? {} : { description: text }

      if (state.org === undefined) {
        creates.push({
          change: { action: "create", kind: "organization", path: name },
          run: (uids) =>
            Effect.map(
              groups.createRoot(principal, { name, ...description(wanted.description) }),
              (org) => void uids.set("", org.uid)
            )
        })
      } else if ((wanted.description ?? "") !== state.org.description) {
        const org = state.org
        updates.push({
          change: { action: "update", kind: "organization", path: name, detail: "description" },
          run: () => groups.update(principal, org.uid, { description: wanted.description ?? "" }, "description")
        })
      }

      const misnamed = misnamedFolder(wanted.folders, at)
      if (misnamed !== undefined) {
        return yield* InvalidArgument.field(
          misnamed,
          "is no folder name: lowercase letters, digits, spaces, dots, underscores and dashes, at most 63, with no " +
            "space at either end and not only dots"
        )
      }
      const folders = foldersOf(wanted)
      /** A folder by path, as the document names it ("" for the organization). */
      const folderNamed = (path: string) => path === "" || folders.has(path) || (state.folders.has(path) && !prune)
      for (const [path, folder] of folders) {
        const current = state.folders.get(path)
        const parent = path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : ""
        const folderName = path.slice(parent === "" ? 0 : parent.length + 1)
        if (current === undefined) {
          creates.push({
            change: { action: "create", kind: "folder", path: full(path) },
            batch: { _tag: "folder", path, parent, input: { name: folderName, ...description(folder.description) } }
          })
        } else if ((folder.description ?? "") !== current.description) {
          updates.push({
            change: { action: "update", kind: "folder", path: full(path), detail: "description" },
            run: () => groups.update(principal, current.uid, { description: folder.description ?? "" }, "description")
          })
        }
      }

      const wantedRoles = new Set<string>()
      for (const [roleName, spec] of byKey(wanted.roles)) {
        const listed = isList(spec) ? spec : spec.capabilities
        const capabilities: Array<Capability.Capability> = []
        for (const [i, written] of listed.entries()) {
          const capability = Capability.fromName(written)
          if (capability === undefined) {
            const field = `${at}.roles.${roleName}${isList(spec) ? "" : ".capabilities"}[${i}]`
            return yield* InvalidArgument.field(field, `is not a capability: ${written}`)
          }
          if (!capabilities.includes(capability)) capabilities.push(capability)
        }
        capabilities.sort()
        if (Role.builtInByName(roleName) !== undefined) {
          return yield* InvalidArgument.field(`${at}.roles.${roleName}`, "is the name of a built-in role")
        }
        wantedRoles.add(roleName)
        const roleDescription = isList(spec) ? "" : spec.description ?? ""
        const current = state.roles.get(roleName)
        if (current === undefined) {
          creates.push({
            change: { action: "create", kind: "role", path: full(roleName) },
            run: (uids) =>
              Effect.flatMap(uidOf(uids, ""), (org) =>
                Effect.map(
                  roles.create(principal, org, { name: roleName, description: roleDescription, capabilities }),
                  (created) => void uids.set(`role:${roleName}`, created.uid)
                ))
          })
          continue
        }
        const had = new Set<string>(current.capabilities)
        const detail = [
          ...capabilities.filter((c) => !had.has(c)).map((c) => `+${c}`),
          ...[...current.capabilities].sort().filter((c) => !capabilities.includes(c)).map((c) => `-${c}`),
          ...(roleDescription === current.description ? [] : ["description"])
        ]
        if (detail.length > 0) {
          updates.push({
            change: { action: "update", kind: "role", path: full(roleName), detail: detail.join(" ") },
            run: () =>
              roles.update(
                principal,
                current.uid,
                { description: roleDescription, capabilities },
                "description,capabilities"
              )
          })
        }
      }

      const wantedIdentities = new Map<string, typeof IdentitySpec.Type>()
      for (const [key, spec] of byKey(wanted.identities)) {
        const path = spec.group === undefined ? key : joined(spec.group, key)
        const folder = path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : ""
        const identityName = path.slice(folder === "" ? 0 : folder.length + 1)
        if (!folderNamed(folder)) {
          return yield* InvalidArgument.field(`${at}.identities.${key}`, `is in no folder of the document: ${folder}`)
        }
        if (wantedIdentities.has(path)) {
          return yield* InvalidArgument.field(`${at}.identities.${key}`, `names the identity ${path} twice`)
        }
        wantedIdentities.set(path, spec)
        const claimMatch = claimMatchOf(spec)
        const current = state.identities.get(path)
        if (current === undefined) {
          creates.push({
            change: { action: "create", kind: "identity", path: full(path) },
            batch: {
              _tag: "identity",
              path,
              resolve: (uids) =>
                Effect.map(uidOf(uids, folder), (groupUid) => ({
                  groupUid,
                  input: { name: identityName, ...description(spec.description), claimMatch },
                  at: `${at}.identities.${key}`
                }))
            }
          })
        } else if (
          claimKey(claimMatch) !== claimKey(current.claimMatch) || (spec.description ?? "") !== current.description
        ) {
          updates.push({
            change: { action: "update", kind: "identity", path: full(path), detail: "claimMatch, description" },
            run: () =>
              identities.update(
                principal,
                current.uid,
                { description: spec.description ?? "", claimMatch },
                "description,claimMatch"
              )
          })
        }
      }

      /** A role by name, as a binding, a provider's default role or a mapping names it; undefined if none. */
      const roleNamed = (roleName: string) =>
        Role.builtInByName(roleName) !== undefined || wantedRoles.has(roleName) ||
        (state.roles.has(roleName) && !prune)
      const roleUid = (uids: Map<string, Uid.Uid>, roleName: string) =>
        Effect.suspend(() => {
          const known = Role.builtInByName(roleName)?.uid ?? state.roles.get(roleName)?.uid
          return known === undefined ? uidOf(uids, `role:${roleName}`) : Effect.succeed(known)
        })

      const wantedProviders = new Set<string>()
      for (const [key, spec] of byKey(wanted.identityProviders)) {
        const field = `${at}.identityProviders.${key}`
        const path = spec.group === undefined ? key : joined(spec.group, key)
        const { folder, name: providerName } = split(path)
        if (!folderNamed(folder)) {
          return yield* InvalidArgument.field(field, `is in no folder of the document: ${folder}`)
        }
        if (wantedProviders.has(path)) {
          return yield* InvalidArgument.field(field, `names the identity provider ${path} twice`)
        }
        wantedProviders.add(path)
        if (!roleNamed(spec.defaultRole)) {
          return yield* InvalidArgument.field(`${field}.defaultRole`, `names no role: ${spec.defaultRole}`)
        }
        const clientSecret = spec.secretFrom === undefined ? "" : options.secretOf === undefined
          ? yield* InvalidArgument.field(
            `${field}.secretFrom`,
            "cannot be read here: apply the document with arbor, which reads it and sends what it read"
          )
          : yield* options.secretOf(spec.secretFrom, `${field}.secretFrom`)
        // Where the secret was read, shown in the plan: a reviewer sees which variable or file a change would send.
        const secretSource = spec.secretFrom === undefined
          ? undefined
          : `clientSecret from ${OrganizationDocument.sourceOf(spec.secretFrom).replace(":", " ")}`
        // A plan is made by applying and undoing: an unknown secret stands in as a placeholder that is never kept.
        const oidc = {
          issuer: spec.issuer,
          clientId: spec.clientId,
          clientSecret: clientSecret ?? unknownSecret,
          additionalScopes: spec.additionalScopes ?? [],
          pkceEnabled: spec.pkce ?? false,
          groupsClaim: spec.groupsClaim ?? ""
        }
        const fields = (uids: Map<string, Uid.Uid>) =>
          Effect.gen(function*() {
            if (clientSecret === undefined && options.validateOnly !== true) {
              return yield* InvalidArgument.field(
                "secretFrom",
                "was not read: a plan may leave it unknown, an apply not"
              )
            }
            return { description: spec.description ?? "", defaultRole: yield* roleUid(uids, spec.defaultRole), oidc }
          })
        const current = state.providers.get(path)
        if (current === undefined) {
          creates.push({
            at: field,
            change: {
              action: "create",
              kind: "identityProvider",
              path: full(path),
              ...(secretSource === undefined ? {} : { detail: secretSource })
            },
            run: (uids) =>
              Effect.gen(function*() {
                const parent = yield* uidOf(uids, folder)
                const created = yield* providers.create(principal, parent, {
                  name: providerName,
                  ...(yield* fields(uids))
                })
                uids.set(`provider:${path}`, created.uid)
              })
          })
        } else {
          const now = current.oidc
          const detail = [
            ...((spec.description ?? "") === current.description ? [] : ["description"]),
            ...(spec.defaultRole === state.roleNames.get(current.defaultRole) ? [] : ["defaultRole"]),
            ...(oidc.issuer === now.issuer ? [] : ["issuer"]),
            ...(oidc.clientId === now.clientId ? [] : ["clientId"]),
            // An unknown secret (a plan's caller could not read it) is not compared.
            ...(clientSecret === undefined || (yield* secretIs(principal, current, clientSecret, true))
              ? []
              : [secretSource ?? "clientSecret"]),
            ...(oidc.additionalScopes.join(" ") === now.additionalScopes.join(" ") ? [] : ["additionalScopes"]),
            ...(oidc.pkceEnabled === now.pkceEnabled ? [] : ["pkce"]),
            ...(oidc.groupsClaim === now.groupsClaim ? [] : ["groupsClaim"])
          ]
          if (detail.length > 0) {
            updates.push({
              at: field,
              change: { action: "update", kind: "identityProvider", path: full(path), detail: detail.join(", ") },
              run: (uids) =>
                Effect.flatMap(
                  fields(uids),
                  (patch) => providers.update(principal, current.uid, patch, "description,defaultRole,oidc")
                )
            })
          }
        }
        const had = state.mappings.get(path) ?? new Map<string, MappedAs>()
        const wantedMappings = new Set<string>()
        for (const [j, mapping] of (spec.mappings ?? []).entries()) {
          const where = `${field}.mappings[${j}]`
          if (!roleNamed(mapping.role)) {
            return yield* InvalidArgument.field(`${where}.role`, `names no role: ${mapping.role}`)
          }
          const scope = mapping.scope ?? folder
          if (!folderNamed(scope)) {
            return yield* InvalidArgument.field(`${where}.scope`, `names no folder of the document: ${scope}`)
          }
          if (!(folder === "" || scope === folder || scope.startsWith(`${folder}/`))) {
            return yield* InvalidArgument.field(
              `${where}.scope`,
              `is not at or below the provider's folder ${folder}`
            )
          }
          const key = mappingKey(mapping.externalGroup, mapping.role, scope)
          if (wantedMappings.has(key)) {
            continue
          }
          wantedMappings.add(key)
          if (had.has(key)) continue
          creates.push({
            at: where,
            change: {
              action: "create",
              kind: "mapping",
              path: `${full(path)}: ${mapping.externalGroup} → ${mapping.role} at ${full(scope)}`
            },
            run: (uids) =>
              Effect.gen(function*() {
                const provider = current?.uid ?? (yield* uidOf(uids, `provider:${path}`))
                yield* mappings.create(principal, provider, {
                  externalGroupId: mapping.externalGroup,
                  roleUid: yield* roleUid(uids, mapping.role),
                  scope: yield* uidOf(uids, scope)
                })
              })
          })
        }
        pruning(
          had,
          wantedMappings,
          "mapping",
          (_, { externalGroup, role, scope }) => `${full(path)}: ${externalGroup} → ${role} at ${full(scope)}`,
          ({ mapping }) => mappings.delete(principal, mapping.uid)
        )
      }

      const wantedBindings = new Set<string>()
      /** The document's identities' paths by their last name. */
      const pathsByName = new Map<string, Array<string>>()
      for (const path of wantedIdentities.keys()) {
        const last = path.slice(path.lastIndexOf("/") + 1)
        pathsByName.set(last, [...(pathsByName.get(last) ?? []), path])
      }
      for (const [i, binding] of (wanted.bindings ?? []).entries()) {
        const where = `${at}.bindings[${i}]`
        // An identity by its path, or by its name when one identity of the document has it (the fixture's way).
        const named = pathsByName.get(binding.identity) ?? []
        const identity = wantedIdentities.has(binding.identity) || (state.identities.has(binding.identity) && !prune)
          ? binding.identity
          : named.length === 1
          ? named[0]!
          : undefined
        if (identity === undefined) {
          return yield* InvalidArgument.field(
            `${where}.identity`,
            named.length > 1
              ? `names ${named.length} identities of the document: give its path (${named.join(", ")})`
              : `names no identity of the document: ${binding.identity}`
          )
        }
        if (!roleNamed(binding.role)) {
          return yield* InvalidArgument.field(`${where}.role`, `names no role: ${binding.role}`)
        }
        const group = binding.group ?? ""
        if (!folderNamed(group)) {
          return yield* InvalidArgument.field(`${where}.group`, `names no folder of the document: ${group}`)
        }
        const key = bindingKey(identity, binding.role, group)
        if (wantedBindings.has(key)) continue
        wantedBindings.add(key)
        const window = { startTime: binding.starts ?? null, expireTime: binding.expires ?? null }
        const iso = (time: DateTime.Utc | null) => time === null ? null : DateTime.formatIso(time)
        const current = state.bindings.get(key)
        const condition = binding.condition === undefined
          ? null
          : Schema.encodeSync(Condition.Condition)(binding.condition)
        if (current !== undefined) {
          // Its window and condition are the binding's to change: an update, not another binding.
          const was = current.binding.condition
          const changed = [
            ...(["startTime", "expireTime"] as const).filter((field) =>
              current.binding[field]?.epochMillis !== window[field]?.epochMillis
            ),
            ...((was === null ? null : JSON.stringify(Schema.encodeSync(Condition.Condition)(was))) ===
                (condition === null ? null : JSON.stringify(condition))
              ? []
              : ["condition" as const])
          ]
          if (changed.length > 0) {
            const uid = current.binding.uid
            const [first] = changed
            updates.push({
              at: `${where}.${first === "expireTime" ? "expires" : first === "startTime" ? "starts" : "condition"}`,
              change: {
                action: "update",
                kind: "binding",
                path: `${full(identity)} → ${binding.role} at ${full(group)}`,
                detail: changed.map((field) =>
                  field === "expireTime"
                    ? `expires ${iso(window.expireTime) ?? "never"}`
                    : field === "startTime"
                    ? `starts ${iso(window.startTime) ?? "at once"}`
                    : condition === null
                    ? "no condition"
                    : `if ${condition.expression}`
                ).join(", ")
              },
              run: () =>
                bindings.update(
                  principal,
                  uid,
                  { startTime: iso(window.startTime), expireTime: iso(window.expireTime), condition },
                  changed.join(",")
                )
            })
          }
          continue
        }
        creates.push({
          change: {
            action: "create",
            kind: "binding",
            path: `${full(identity)} → ${binding.role} at ${full(group)}`
          },
          batch: {
            _tag: "binding",
            resolve: (uids) =>
              Effect.gen(function*() {
                const groupUid = yield* uidOf(uids, group)
                const identityUid = state.identities.get(identity)?.uid ??
                  (yield* uidOf(uids, `identity:${identity}`))
                return {
                  groupUid,
                  input: {
                    identityUid,
                    roleUid: yield* roleUid(uids, binding.role),
                    ...(window.startTime === null ? {} : { startTime: DateTime.formatIso(window.startTime) }),
                    ...(window.expireTime === null ? {} : { expireTime: DateTime.formatIso(window.expireTime) }),
                    ...(condition === null ? {} : { condition })
                  }
                }
              })
          }
        })
      }

      const wantedSubscriptions = new Set<string>()
      for (const [i, spec] of (wanted.subscriptions ?? []).entries()) {
        const group = spec.group ?? ""
        if (!folderNamed(group)) {
          return yield* InvalidArgument.field(
            `${at}.subscriptions[${i}].group`,
            `names no folder of the document: ${group}`
          )
        }
        const key = subscriptionKey(spec.sink, group)
        if (wantedSubscriptions.has(key)) continue
        wantedSubscriptions.add(key)
        if (state.subscriptions.has(key)) continue
        creates.push({
          at: `${at}.subscriptions[${i}]`,
          change: { action: "create", kind: "subscription", path: `${full(group)} → ${spec.sink}` },
          run: (uids) =>
            Effect.flatMap(
              uidOf(uids, group),
              (parent) => subscriptions.create(principal, parent, { sink: spec.sink })
            )
        })
      }

      // The vocabulary is the organization's as a whole: replaced when the document's differs (emptied only by prune).
      const currentWords = wordsOf(state.vocabulary)
      const wantedWords = wanted.decisions === undefined ? (prune ? wordsOf(undefined) : undefined) : wanted.decisions
      if (wantedWords !== undefined && canonical(wantedWords) !== canonical(currentWords)) {
        const changed = (["subjects", "actions", "resources"] as const).filter((kind) =>
          canonical(wantedWords[kind]) !== canonical(currentWords[kind])
        )
        updates.push({
          at: `${at}.decisions`,
          change: {
            action: isEmpty(currentWords) ? "create" : isEmpty(wantedWords) ? "delete" : "update",
            kind: "decisions",
            path: name,
            detail: changed.join(", ")
          },
          run: (uids) => Effect.flatMap(uidOf(uids, ""), (org) => vocabularies.set(principal, org, wantedWords))
        })
      }

      pruning(
        state.subscriptions,
        wantedSubscriptions,
        "subscription",
        (_, { group, subscription }) => `${full(group)} → ${subscription.sink}`,
        ({ subscription }) => subscriptions.delete(principal, subscription.uid)
      )
      // A provider's mappings go with it.
      pruning(state.providers, wantedProviders, "identityProvider", full, (p) => providers.delete(principal, p.uid))
      pruning(
        state.bindings,
        wantedBindings,
        "binding",
        (_, { group, identity, role }) => `${full(identity)} → ${role} at ${full(group)}`,
        ({ binding }) => bindings.delete(principal, binding.uid),
        ({ binding }) => binding
      )
      pruning(state.identities, wantedIdentities, "identity", full, (i) => identities.delete(principal, i.uid))
      pruning(state.roles, wantedRoles, "role", full, (role) => roles.delete(principal, role.uid))
      pruning(
        [...state.folders].sort(([a], [b]) => b.split("/").length - a.split("/").length),
        folders,
        "folder",
        full,
        (folder) => groups.delete(principal, folder.uid)
      )
      yield* keepsOwners(
        principal,
        state,
        deletes.flatMap((step) => step.binding === undefined ? [] : [step.binding])
      )
      /** The uids of what exists, by path, before the steps make more. */
      const existing = new Map<string, Uid.Uid>([
        ...(state.org === undefined ? [] : [["", state.org.uid] as const]),
        ...[...state.folders].map(([path, folder]) => [path, folder.uid] as const)
      ])
      return { existing, steps: [...creates, ...updates, ...deletes], etag: etagOf(state) }
    })

  return { stepsOf }
}
