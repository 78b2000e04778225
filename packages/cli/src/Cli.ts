/**
 * The `arbor` command tree: `auth` to sign in and get tokens, `config` for the config file, and `iam` for the
 * hierarchy. The `auth` and `iam` commands take `--api` and `--issuer`, those with results `-o`; results go to stdout,
 * messages for the person to stderr.
 */
import { Api, Wire } from "@arbor/api"
import * as Errors from "@arbor/core/Errors"
import type { Group } from "@arbor/core/Group"
import { Args, Command, Options } from "@effect/cli"
import { HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Auth from "./Auth.js"
import { NotLoggedIn, UsageError } from "./Failure.js"
import * as Output from "./Output.js"
import * as Where from "./Where.js"

const common = {
  api: Options.text("api").pipe(
    Options.withDescription(`the API's address (default: ARBOR_API, the config file, or ${Where.defaultApi})`),
    Options.optional
  ),
  issuer: Options.text("issuer").pipe(
    Options.withDescription("the token service's address (default: ARBOR_ISSUER, the config file, or the API's)"),
    Options.optional
  )
}

const output = Options.choice("output", Output.formats).pipe(
  Options.withAlias("o"),
  Options.withDescription("how to print results"),
  Options.withDefault("table" as const)
)

const limit = Options.integer("limit").pipe(
  Options.withDescription("print at most this many (default: every page)"),
  Options.optional
)

const print = (text: string) => Effect.sync(() => text === "" || process.stdout.write(`${text}\n`))

/** The API's typed client, with a valid token. */
const apiClient = (where: Where.Endpoints) =>
  Effect.flatMap(Auth.token(where), (token) =>
    HttpApiClient.make(Api.Api, {
      baseUrl: where.api,
      transformClient: HttpClient.mapRequest(HttpClientRequest.bearerToken(token))
    }))

// auth

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
      Options.withDescription("a workload: the path of a file holding its OIDC token, or the token itself"),
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

const token = Command.make(
  "token",
  common,
  (flags) => Effect.flatMap(Where.endpoints(flags), (where) => Effect.flatMap(Auth.token(where), print))
).pipe(
  Command.withDescription("Print a valid API token, refreshing it when needed. Example: arbor auth token")
)

const status = Command.make("status", { ...common, output }, (flags) =>
  Effect.gen(function*() {
    const where = yield* Where.endpoints(flags)
    const cached = Auth.cachedToken(where)
    if (cached === undefined) return yield* new NotLoggedIn({ message: `not logged in to ${where.api}` })
    const claims = Auth.claimsOf(yield* Auth.token(where))
    const client = yield* apiClient(where)
    const organizations = yield* client.groups.list({ urlParams: { "uidp.in_root": "true", page_size: "200" } })
    const status = {
      api: where.api,
      identity: String(claims.sub),
      ...(typeof claims.email === "string" ? { email: claims.email } : {}),
      expiry: new Date(Number(claims.exp) * 1000).toISOString(),
      organizations: organizations.groups.map((g) => g.name)
    }
    yield* print(
      flags.output === "json"
        ? JSON.stringify(status, null, 2)
        : Object.entries(status).map(([k, v]) => `${`${k}:`.padEnd(15)}${Array.isArray(v) ? v.join(", ") : v}`).join(
          "\n"
        )
    )
  })).pipe(
    Command.withDescription("Who you are logged in as, until when, and your organizations. Example: arbor auth status")
  )

const logout = Command.make("logout", common, (flags) => Effect.flatMap(Where.endpoints(flags), Auth.logout)).pipe(
  Command.withDescription("Revoke the refresh token and forget the cached tokens. Example: arbor auth logout")
)

const auth = Command.make("auth").pipe(
  Command.withDescription("Sign in and get tokens."),
  Command.withSubcommands([login, token, status, logout])
)

// config

const configView = Command.make(
  "view",
  {},
  () => print(Object.entries(Where.readConfig()).map(([k, v]) => `${k}: ${v}`).join("\n"))
).pipe(
  Command.withDescription(`Print the config file's settings. Example: arbor config view`)
)

const configSet = Command.make(
  "set",
  {
    name: Args.choice(Where.settingNames.map((n) => [n, n] as const), { name: "name" }),
    value: Args.text({ name: "value" })
  },
  ({ name, value }) => Effect.sync(() => Where.writeSetting(name, value))
).pipe(
  Command.withDescription("Set a setting of the config file. Example: arbor config set api https://iam.example.com")
)

const config = Command.make("config").pipe(
  Command.withDescription("The config file ($XDG_CONFIG_HOME/arbor/config.yaml)."),
  Command.withSubcommands([configView, configSet])
)

// iam: groups

const groupShape: Output.Shape<Group> = {
  json: Wire.Group.v2,
  columns: [
    { heading: "NAME", value: (g) => g.name },
    { heading: "UID", value: (g) => g.uid },
    { heading: "DESCRIPTION", value: (g) => g.description },
    { heading: "CREATED", value: (g) => new Date(g.createTime.epochMillis).toISOString(), wide: true }
  ],
  label: (g) => g.name
}

type Client = Effect.Effect.Success<ReturnType<typeof apiClient>>

/** Every group a list's parameters select, page by page, up to `limit`. */
const allGroups = (client: Client, params: Record<string, string>, limit: Option.Option<number>) =>
  Effect.gen(function*() {
    const rows: Array<Group> = []
    let pageToken: string | undefined
    do {
      const page = yield* client.groups.list({
        urlParams: { ...params, page_size: "200", ...(pageToken === undefined ? {} : { page_token: pageToken }) }
      })
      rows.push(...page.groups)
      pageToken = page.nextPageToken
    } while (pageToken !== undefined && pageToken !== "" && (Option.isNone(limit) || rows.length < limit.value))
    return Option.isNone(limit) ? rows : rows.slice(0, limit.value)
  })

/** A group named by its uid, or by a path of names from its organization (`acme/platform/build`). */
const resolveGroup = (client: Client, ref: string) =>
  Effect.gen(function*() {
    if (/^[0-9a-f]{40}(\/[0-9a-f]{16})*$/.test(ref)) return ref
    let parent: string | undefined
    for (const name of ref.split("/").filter((n) => n !== "")) {
      const page = yield* client.groups.list({
        urlParams: { name, ...(parent === undefined ? { "uidp.in_root": "true" } : { "uidp.children_of": parent }) }
      })
      const found = page.groups[0]
      if (found === undefined) return yield* new Errors.NotFound({ resourceType: "group", uid: ref })
      parent = found.uid
    }
    if (parent === undefined) return yield* new UsageError({ message: "a group is a uid or a path of names" })
    return parent
  })

const parent = Options.text("parent").pipe(
  Options.withDescription("the parent group: a uid or a path of names (acme/platform)")
)
const description = Options.text("description").pipe(Options.withDescription("what it is for"), Options.optional)

const printed = (rows: ReadonlyArray<Group>, format: Output.Format) => print(Output.render(rows, groupShape, format))

const organizationsList = Command.make("list", { ...common, output, limit }, (flags) =>
  Effect.gen(function*() {
    const where = yield* Where.endpoints(flags)
    const client = yield* apiClient(where)
    yield* printed(yield* allGroups(client, { "uidp.in_root": "true", order_by: "name" }, flags.limit), flags.output)
  })).pipe(Command.withDescription("List the organizations you can see. Example: arbor iam organizations list -o json"))

const organizations = Command.make("organizations").pipe(
  Command.withDescription("Organizations: the roots of the hierarchy."),
  Command.withSubcommands([organizationsList])
)

const foldersList = Command.make(
  "list",
  {
    ...common,
    output,
    limit,
    parent: parent.pipe(
      Options.withDescription("list only below this group (default: every group you can see)"),
      Options.optional
    )
  },
  (flags) =>
    Effect.gen(function*() {
      const where = yield* Where.endpoints(flags)
      const client = yield* apiClient(where)
      const below = Option.isSome(flags.parent) ? yield* resolveGroup(client, flags.parent.value) : undefined
      const rows = yield* allGroups(
        client,
        { order_by: "name", ...(below === undefined ? {} : { "uidp.descendants_of": below }) },
        flags.limit
      )
      yield* printed(rows, flags.output)
    })
).pipe(Command.withDescription(
  "List folders (and organizations) you can see; -o tree draws the hierarchy. Example: arbor iam folders list -o tree"
))

const foldersCreate = Command.make(
  "create",
  { ...common, output, parent, description, name: Args.text({ name: "name" }) },
  (flags) =>
    Effect.gen(function*() {
      const where = yield* Where.endpoints(flags)
      const client = yield* apiClient(where)
      const created = yield* client.groups.create({
        path: { uid: yield* resolveGroup(client, flags.parent) },
        payload: {
          name: flags.name,
          ...(Option.isSome(flags.description) ? { description: flags.description.value } : {})
        }
      })
      yield* printed([created], flags.output)
    })
).pipe(Command.withDescription("Create a folder. Example: arbor iam folders create build --parent acme/platform"))

const uid = Args.text({ name: "uid" }).pipe(Args.withDescription("the folder's uid, or its path of names"))

const foldersDescribe = Command.make("describe", { ...common, output, uid }, (flags) =>
  Effect.gen(function*() {
    const where = yield* Where.endpoints(flags)
    const client = yield* apiClient(where)
    const group = yield* client.groups.get({ path: { uid: yield* resolveGroup(client, flags.uid) } })
    yield* printed([group], flags.output === "table" ? "wide" : flags.output)
  })).pipe(Command.withDescription("Show one folder. Example: arbor iam folders describe acme/platform"))

const foldersDelete = Command.make("delete", { ...common, uid }, (flags) =>
  Effect.gen(function*() {
    const where = yield* Where.endpoints(flags)
    const client = yield* apiClient(where)
    yield* client.groups.delete({ path: { uid: yield* resolveGroup(client, flags.uid) } })
  })).pipe(Command.withDescription("Delete an empty folder. Example: arbor iam folders delete acme/platform/old"))

const folders = Command.make("folders").pipe(
  Command.withDescription("Folders: the groups below an organization."),
  Command.withSubcommands([foldersList, foldersCreate, foldersDescribe, foldersDelete])
)

const iam = Command.make("iam").pipe(
  Command.withDescription("Organizations, folders, identities, roles and bindings."),
  Command.withSubcommands([organizations, folders])
)

/** The whole command line. */
export const arbor = Command.make("arbor").pipe(
  Command.withDescription("Arbor's command-line client: sign in, get tokens, manage the hierarchy."),
  Command.withSubcommands([auth, config, iam])
)
