/**
 * First start: on an empty store, create the organization, an identity `bootstrap-admin` holding `owner` there,
 * and a one-hour API token for it in `<data dir>/bootstrap-token` (mode 0600). Of several servers starting on one
 * empty database, exactly one bootstraps (and writes the token in its data directory).
 */
import type { Errors } from "@arbor/core"
import { Groups, Identities, Principal, Role, RoleBindings, TokenIssuer } from "@arbor/core"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { join } from "node:path"
import * as DataDir from "./DataDir.js"
import type { ServerConfig } from "./ServerConfig.js"

/** An issuer that never issues: the bootstrap identity is assumable only when one is configured. */
export const unassumableIssuer = "https://bootstrap.arbor.invalid"

/** Bootstraps the store if it holds no organization yet; returns the organization's uid if it did. */
export const run = (config: ServerConfig): Effect.Effect<
  string | undefined,
  Errors.ArborError,
  Groups.Groups | Identities.Identities | RoleBindings.RoleBindings | TokenIssuer.TokenIssuer
> =>
  Effect.gen(function*() {
    const groups = yield* Groups.Groups
    const existing = yield* groups.list(Principal.system, { inRoot: true, pageSize: 1 })
    if (existing.totalCount > 0) return undefined
    // Servers starting together on one database race here; the organization's unique name lets one win.
    const created = yield* groups.createRoot(Principal.system, { name: config.orgName }).pipe(
      Effect.asSome,
      Effect.catchTag("AlreadyExists", () => Effect.succeedNone)
    )
    if (Option.isNone(created)) return undefined
    const org = created.value
    const configured = config.bootstrapIssuer !== undefined && config.bootstrapSubject !== undefined
    const admin = yield* (yield* Identities.Identities).create(Principal.system, org.uid, {
      name: "bootstrap-admin",
      description: "created at first start; owner of the organization",
      claimMatch: configured
        ? { issuer: config.bootstrapIssuer!, subject: config.bootstrapSubject! }
        : { issuer: unassumableIssuer, subject: "bootstrap-admin" }
    })
    yield* (yield* RoleBindings.RoleBindings).create(Principal.system, org.uid, {
      identityUid: admin.uid,
      roleUid: Role.builtInByName("owner")!.uid
    })
    const { token } = yield* (yield* TokenIssuer.TokenIssuer).mint(admin.uid, { iss: config.authUrl, sub: "bootstrap" })
    const path = join(config.dataDir, DataDir.files.bootstrapToken)
    yield* DataDir.writeSecret(path, `${token}\n`)
    yield* Effect.logInfo("bootstrapped a new organization").pipe(
      Effect.annotateLogs({ organization: org.uid, identity: admin.uid, token: path })
    )
    return org.uid
  })
