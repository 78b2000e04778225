/**
 * `arbor auth`: sign in (a browser, another device, or a workload's own token), print a valid token, show who is
 * signed in, sign out.
 */
import type { ListOptions } from "@arbor/core/Lists"
import { Command, Options } from "@effect/cli"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Auth from "../Auth.js"
import { UsageError } from "../Failure.js"
import * as Help from "../Help.js"
import * as Where from "../Where.js"
import { allPages, apiClient, common, output, print } from "./shared.js"

const login = Command.make(
  "login",
  {
    ...common,
    headless: Options.boolean("headless").pipe(
      Options.withDescription("sign in on another device: print an address and a code instead of opening a browser")
    ),
    identity: Options.text("identity").pipe(
      Options.withDescription("a workload: the identity to assume"),
      Options.optional
    ),
    identityToken: Options.text("identity-token").pipe(
      Options.withDescription(
        "a workload: the path of a file holding its OIDC token, or - to read it from standard input (never the " +
          "token itself: a command line is visible to every user of the machine)"
      ),
      Options.optional
    ),
    invite: Options.text("invite-code").pipe(
      Options.withDescription("an invite to redeem at sign-in"),
      Options.optional
    ),
    idp: Options.text("idp").pipe(
      Options.withDescription("an organization's identity provider: its uid, or the organization's uid or name"),
      Options.optional
    )
  },
  (flags) =>
    Effect.gen(function*() {
      const where = yield* Where.endpoints(flags)
      if (Option.isSome(flags.identity) !== Option.isSome(flags.identityToken)) {
        return yield* new UsageError({ message: "--identity and --identity-token go together" })
      }
      const person = { idp: Option.getOrUndefined(flags.idp), invite: Option.getOrUndefined(flags.invite) }
      const token = Option.isSome(flags.identity)
        ? yield* Auth.loginWorkload(where, flags.identity.value, Option.getOrThrow(flags.identityToken))
        : flags.headless
        ? yield* Auth.loginHeadless(where, person)
        : yield* Auth.loginBrowser(where, person)
      const claims = Auth.claimsOf(token)
      yield* Effect.sync(() => process.stderr.write(`Logged in to ${where.api} as ${claims.email ?? claims.sub}\n`))
    })
).pipe(Command.withDescription(
  "Sign in: in a browser (the default), on another device (--headless), or as a workload with its own OIDC token. " +
    "Example: arbor auth login --identity <uid> --identity-token /var/run/secrets/token"
))

/** Values of a repeatable flag, each also split at commas. */
const list = (values: ReadonlyArray<string>) =>
  values.flatMap((v) => v.split(",")).map((v) => v.trim()).filter((v) => v !== "")

const token = Command.make(
  "token",
  {
    ...common,
    capabilities: Options.text("capabilities").pipe(
      Options.withDescription("a new token holding only these capabilities (repeatable or comma-separated)"),
      Options.repeated
    ),
    scope: Options.text("scope").pipe(
      Options.withDescription("a new token usable only in these groups and below (repeatable or comma-separated)"),
      Options.repeated
    )
  },
  (flags) =>
    Effect.gen(function*() {
      const where = yield* Where.endpoints(flags)
      const narrowing = { capabilities: list(flags.capabilities), scopes: list(flags.scope) }
      const narrowed = narrowing.capabilities.length > 0 || narrowing.scopes.length > 0
      yield* print(narrowed ? yield* Auth.narrowedToken(where, narrowing) : yield* Auth.token(where))
    })
).pipe(
  Command.withDescription(
    "Print a valid API token, refreshing it when needed; with --capabilities or --scope, a new token holding only " +
      "those. Example: arbor auth token --capabilities groups.list --scope <group uid>"
  )
)

const status = Command.make("status", { ...common, output }, (flags) =>
  Effect.gen(function*() {
    const where = yield* Where.endpoints(flags)
    const claims = Auth.claimsOf(yield* Auth.token(where))
    const me = String(claims.sub)
    const client = yield* apiClient(where)
    const organizations = yield* allPages(
      (urlParams: ListOptions) => client.groups.list({ urlParams }),
      (page) => page.groups,
      { inRoot: true, orderBy: "name" },
      Option.none()
    )
    // What the caller holds in each organization, as the server decides it (its own question: always allowed).
    const capabilities = yield* Effect.forEach(organizations, (organization) =>
      Effect.map(
        client.decisions.searchActions({
          payload: {
            subject: { type: "identity", id: me },
            resource: { type: "group", id: organization.uid }
          }
        }),
        ({ results }) => [organization.name, results.map((r) => r.name)] as const
      ), { concurrency: 4 })
    const status = {
      api: where.api,
      identity: me,
      ...(typeof claims.email === "string" ? { email: claims.email } : {}),
      expiry: new Date(Number(claims.exp) * 1000).toISOString(),
      organizations: organizations.map((g) => g.name)
    }
    yield* print(
      flags.output === "json"
        ? JSON.stringify({ ...status, capabilities: Object.fromEntries(capabilities) }, null, 2)
        : [
          ...Object.entries(status).map(([k, v]) =>
            `${`${k}:`.padEnd(15)}${Array.isArray(v) ? v.join(", ") || "none" : v}`
          ),
          "capabilities:",
          ...capabilities.map(([name, held]) => `  ${name}: ${held.join(" ") || "none"}`)
        ].join("\n")
    )
  })).pipe(
    Command.withDescription(
      "Who you are logged in as, until when, your organizations and what you may do in each. Example: arbor auth status"
    )
  )

const logout = Command.make("logout", common, (flags) => Effect.flatMap(Where.endpoints(flags), Auth.logout)).pipe(
  Command.withDescription("Revoke the refresh token and forget the cached tokens. Example: arbor auth logout")
)

/** `arbor auth`. */
export const auth = Command.make("auth").pipe(
  Command.withDescription("Sign in and get tokens."),
  Help.withSubcommands([login, token, status, logout])
)
