/**
 * What a plan reads of an organization (`stateOf`: every resource by its path, as the caller may list it) and the
 * organization as a document (`exportOrganization`).
 */
import * as Effect from "effect/Effect"
import { type ArborError, InvalidArgument } from "../../engine/Errors.js"
import * as Uid from "../../engine/Uid.js"
import type * as IdentityProvider from "../IdentityProvider.js"
import * as OrganizationDocument from "../OrganizationDocument.js"
import type { Document } from "../OrganizationDocument.js"
import { type FolderType, type IdentityProviderSpec, type Organization } from "../OrganizationDocument.js"
import type { Principal } from "../Principal.js"
import * as Role from "../Role.js"

import {
  all,
  bindingKey,
  byKey,
  claimKey,
  isEmpty,
  joined,
  type MappedAs,
  mappingKey,
  type Services,
  split,
  type State,
  subscriptionKey,
  wordsOf
} from "./model.js"

/** The reads of IAM as code over `services`. */
export const reader = (
  { groups, roles, identities, bindings, providers, mappings, subscriptions, vocabularies }: Services
) => {
  /** The organization `name` and what is in it, as `principal` may list it. */
  const stateOf = (principal: Principal, name: string): Effect.Effect<State, ArborError> =>
    Effect.gen(function*() {
      const pathOf = new Map<string, string>()
      const state: State = {
        org: undefined,
        folders: new Map(),
        roles: new Map(),
        identities: new Map(),
        bindings: new Map(),
        providers: new Map(),
        mappings: new Map(),
        subscriptions: new Map(),
        vocabulary: undefined,
        roleNames: new Map(Role.builtIns.map((r) => [r.uid, r.name])),
        groupPaths: pathOf
      }
      const [org] = (yield* groups.list(principal, { inRoot: true, name, pageSize: 1 })).items
      if (org === undefined) return state
      pathOf.set(org.uid, "")
      const pathOfParent = (uid: Uid.Uid) => pathOf.get(Uid.parentOrNull(uid) ?? "")
      const below = yield* all((pageToken) =>
        groups.list(principal, { descendantsOf: org.uid, pageSize: 200, pageToken })
      )
      for (const group of [...below].sort((a, b) => Uid.depth(a.uid) - Uid.depth(b.uid))) {
        const parent = pathOfParent(group.uid)
        if (parent === undefined) continue
        pathOf.set(group.uid, joined(parent, group.name))
        state.folders.set(joined(parent, group.name), group)
      }
      const custom = yield* all((pageToken) => roles.list(principal, { childrenOf: org.uid, pageSize: 200, pageToken }))
      for (const role of custom) {
        state.roles.set(role.name, role)
        state.roleNames.set(role.uid, role.name)
      }
      const identityPath = new Map<string, string>()
      const found = yield* all((pageToken) =>
        identities.list(principal, { descendantsOf: org.uid, pageSize: 200, pageToken })
      )
      for (const identity of found) {
        const parent = pathOfParent(identity.uid)
        if (parent === undefined) continue
        identityPath.set(identity.uid, joined(parent, identity.name))
        state.identities.set(joined(parent, identity.name), identity)
      }
      const bound = yield* all((pageToken) =>
        bindings.list(principal, { descendantsOf: org.uid, pageSize: 200, pageToken })
      )
      for (const binding of bound) {
        const group = pathOfParent(binding.uid)
        const identity = identityPath.get(binding.identity.uid)
        const role = state.roleNames.get(binding.role.uid)
        // A binding of an identity or a role from outside the organization is not the document's to manage, nor
        // one an elevation made (it changes only through the elevation).
        if (group === undefined || identity === undefined || role === undefined || binding.elevationUid !== null) {
          continue
        }
        state.bindings.set(bindingKey(identity, role, group), { identity, role, group, binding })
      }
      const providerPath = new Map<string, string>()
      for (
        const provider of yield* all((pageToken) =>
          providers.list(principal, { descendantsOf: org.uid, pageSize: 200, pageToken })
        )
      ) {
        const parent = pathOfParent(provider.uid)
        if (parent === undefined) continue
        providerPath.set(provider.uid, joined(parent, provider.name))
        state.providers.set(joined(parent, provider.name), provider)
      }
      for (
        const mapping of yield* all((pageToken) =>
          mappings.list(principal, { descendantsOf: org.uid, pageSize: 200, pageToken })
        )
      ) {
        const provider = providerPath.get(mapping.identityProviderUid)
        const role = state.roleNames.get(mapping.roleUid)
        const scope = pathOf.get(mapping.scope)
        // A mapping to a role or a scope from outside the organization is not the document's to manage.
        if (provider === undefined || role === undefined || scope === undefined) continue
        const mapped = state.mappings.get(provider) ?? new Map<string, MappedAs>()
        mapped.set(mappingKey(mapping.externalGroupId, role, scope), {
          externalGroup: mapping.externalGroupId,
          role,
          scope,
          mapping
        })
        state.mappings.set(provider, mapped)
      }
      for (
        const subscription of yield* all((pageToken) =>
          subscriptions.list(principal, { descendantsOf: org.uid, pageSize: 200, pageToken })
        )
      ) {
        const group = pathOfParent(subscription.uid)
        if (group === undefined) continue
        state.subscriptions.set(subscriptionKey(subscription.sink, group), { group, subscription })
      }
      return { ...state, org, vocabulary: yield* vocabularies.get(principal, org.uid) }
    })

  /** The folders below `prefix` as the document writes them. */
  const folderTree = (state: State, prefix: string): Record<string, FolderType> | undefined => {
    const children = [...state.folders].filter(([path]) =>
      path.startsWith(prefix) && path !== prefix && !path.slice(prefix.length).includes("/")
    )
    if (children.length === 0) return undefined
    return Object.fromEntries(
      children.sort(([a], [b]) => (a < b ? -1 : 1)).map(([path, folder]) => {
        const below = folderTree(state, `${path}/`)
        return [path.slice(prefix.length), {
          ...(folder.description === "" ? {} : { description: folder.description }),
          ...(below === undefined ? {} : { folders: below })
        }]
      })
    )
  }

  /**
   * True when `provider`'s client secret is `candidate`, or `unknown` when the caller may not compare it (only those
   * who may change a provider may): a reviewer who may only read plans what it can see, and its export names a
   * secret to supply rather than make the provider a public client.
   */
  const secretIs = (
    principal: Principal,
    provider: IdentityProvider.IdentityProvider,
    candidate: string,
    unknown: boolean
  ) =>
    providers.clientSecretIs(principal, provider.uid, candidate).pipe(
      Effect.catchTag("PermissionDenied", () => Effect.succeed(unknown))
    )

  /** A provider as the document writes it; its secret, which cannot be read, as a variable to supply. */
  const providerSpec = (
    state: State,
    organization: string,
    path: string,
    secret: boolean
  ): typeof IdentityProviderSpec.Type => {
    const provider = state.providers.get(path)!
    const { oidc } = provider
    const mapped = [...(state.mappings.get(path)?.values() ?? [])].sort((a, b) =>
      mappingKey(a.externalGroup, a.role, a.scope) < mappingKey(b.externalGroup, b.role, b.scope) ? -1 : 1
    )
    const folder = split(path).folder
    return {
      ...(provider.description === "" ? {} : { description: provider.description }),
      defaultRole: state.roleNames.get(provider.defaultRole) ?? provider.defaultRole,
      issuer: oidc.issuer,
      clientId: oidc.clientId,
      ...(secret ? { secretFrom: { env: OrganizationDocument.secretVariable(organization, path) } } : {}),
      ...(oidc.additionalScopes.length === 0 ? {} : { additionalScopes: oidc.additionalScopes }),
      ...(oidc.pkceEnabled ? { pkce: true } : {}),
      ...(oidc.groupsClaim === "" ? {} : { groupsClaim: oidc.groupsClaim }),
      ...(mapped.length === 0 ? {} : {
        mappings: mapped.map(({ externalGroup, role, scope }) => ({
          externalGroup,
          role,
          ...(scope === folder ? {} : { scope })
        }))
      })
    }
  }

  /** The organization `name` as a document, in a stable order: exported, applied and exported again, the same. */
  const exportOrganization = (principal: Principal, name: string): Effect.Effect<Document, ArborError> =>
    Effect.gen(function*() {
      const state = yield* stateOf(principal, name)
      if (state.org === undefined) {
        return yield* InvalidArgument.field("organization", `is no organization the caller may list: ${name}`)
      }
      const folders = folderTree(state, "")
      const managed = [...state.identities].filter(([, identity]) => identity.claimMatch !== undefined)
      const organization: Organization = {
        ...(state.org.description === "" ? {} : { description: state.org.description }),
        ...(folders === undefined ? {} : { folders }),
        ...(state.roles.size === 0 ? {} : {
          roles: Object.fromEntries(
            byKey(Object.fromEntries(state.roles)).map(([roleName, role]) => {
              const capabilities = [...role.capabilities].sort()
              return [
                roleName,
                role.description === "" ? capabilities : { description: role.description, capabilities }
              ]
            })
          )
        }),
        ...(managed.length === 0 ? {} : {
          identities: Object.fromEntries(
            byKey(Object.fromEntries(managed)).map(([path, identity]) => {
              const claimMatch = identity.claimMatch!
              const shorthand =
                claimKey(claimMatch) === claimKey({ issuer: claimMatch.issuer, subject: claimMatch.subject })
              return [path, {
                ...(identity.description === "" ? {} : { description: identity.description }),
                ...(shorthand ? { issuer: claimMatch.issuer, subject: claimMatch.subject } : { claimMatch })
              }]
            })
          )
        }),
        ...(state.bindings.size === 0 ? {} : {
          bindings: [...state.bindings].sort(([a], [b]) => (a < b ? -1 : 1)).map((
            [, { binding, group, identity, role }]
          ) => ({
            identity,
            role,
            ...(group === "" ? {} : { group }),
            ...(binding.startTime === null ? {} : { starts: binding.startTime }),
            ...(binding.expireTime === null ? {} : { expires: binding.expireTime }),
            ...(binding.condition === null ? {} : { condition: binding.condition })
          }))
        }),
        ...(isEmpty(wordsOf(state.vocabulary)) ? {} : { decisions: wordsOf(state.vocabulary) }),
        ...(state.subscriptions.size === 0 ? {} : {
          subscriptions: [...state.subscriptions].sort(([a], [b]) => (a < b ? -1 : 1)).map((
            [, { group, subscription }]
          ) => ({
            sink: subscription.sink,
            ...(group === "" ? {} : { group })
          }))
        }),
        ...(state.providers.size === 0 ? {} : {
          identityProviders: Object.fromEntries(
            yield* Effect.forEach(
              byKey(Object.fromEntries(state.providers)),
              ([path, provider]) =>
                Effect.map(
                  secretIs(principal, provider, "", false),
                  (none) => [path, providerSpec(state, name, path, !none)]
                )
            )
          )
        })
      }
      return { organizations: { [name]: organization } }
    })

  return { stateOf, secretIs, exportOrganization }
}

/** The reads of IAM as code. */
export type Reader = ReturnType<typeof reader>
