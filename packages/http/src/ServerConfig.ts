/**
 * The server's configuration, from the environment; every setting has a default, so nothing needs to be set.
 */
import { AccountAssociationCheck, ChangeLog, IssuerUrl, Secrets } from "@arbor/core"
import type { SignIn } from "@arbor/core"
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as Duration from "effect/Duration"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { readFileSync } from "node:fs"
import * as Listener from "./Listener.js"

/** What the server runs with. */
export interface ServerConfig {
  readonly port: number
  readonly host: string
  readonly dataDir: string
  readonly store: "sqlite" | "postgres" | "memory"
  /** The PostgreSQL database (`ARBOR_DATABASE_URL`), for `store: "postgres"`. */
  readonly databaseUrl: Redacted.Redacted | undefined
  /** Connections to it per server (`ARBOR_DATABASE_POOL`). */
  readonly databasePool: number
  /**
   * How stale a decision may be about writes made by another server or process (`ARBOR_DECISION_STALENESS`); unset,
   * every decision sees every commit (docs/operations.md, "Consistency of decisions").
   */
  readonly decisionStaleness?: Duration.Duration | undefined
  /** The API's address: the audience of its tokens. */
  readonly baseUrl: string
  /** The token service's address: the issuer of its tokens. */
  readonly authUrl: string
  readonly orgName: string
  readonly errorDomain: string
  readonly bootstrapIssuer: string | undefined
  readonly bootstrapSubject: string | undefined
  /** A document (docs/api.md §15) applied as the system at every start (`ARBOR_SEED_FILE`); applying it again changes nothing. */
  readonly seedFile?: string | undefined
  /** More audiences that workloads may exchange their tokens for, beside the base URL. */
  readonly audiences: ReadonlyArray<string>
  /** How old the signing key may grow before the server rotates it. */
  readonly keyRotation: Duration.Duration
  /** How long the change log keeps entries (`ARBOR_EVENTS_RETENTION_DAYS`). */
  readonly eventsRetention: Duration.Duration
  /** Identities that may create organizations over the API. */
  readonly platformAdmins: ReadonlyArray<string>
  /** Accept token issuers on `localhost` and loopback addresses (`ARBOR_ALLOW_INSECURE_ISSUERS=loopback`). */
  readonly allowLoopbackIssuers: boolean
  /** Accept webhook sinks on `localhost` and loopback addresses (`ARBOR_ALLOW_INSECURE_SINKS=loopback`). */
  readonly allowLoopbackSinks: boolean
  /** Open connections at most (`ARBOR_MAX_CONNECTIONS`). */
  readonly maxConnections: number
  /**
   * The clouds' token services an account association's check calls (`ARBOR_AWS_STS_URL`, `ARBOR_GOOGLE_STS_URL`,
   * `ARBOR_GOOGLE_IAM_CREDENTIALS_URL`, `ARBOR_AZURE_LOGIN_URL`): the public ones unless set.
   */
  readonly cloudEndpoints: AccountAssociationCheck.CloudEndpointsService
  /** Requests each SCIM token may make a minute (`ARBOR_SCIM_REQUESTS_PER_MINUTE`); past it, 429. */
  readonly scimRequestsPerMinute: number
  /** The server's own sign-in provider (`ARBOR_LOGIN_ISSUER`, `ARBOR_LOGIN_CLIENT_ID`, …), if any. */
  readonly login: SignIn.LoginProvider | undefined
  /** Where traces go (`OTEL_EXPORTER_OTLP_ENDPOINT`); none are made without it. */
  readonly otlpEndpoint: string | undefined
  /** The bearer token `/metrics` asks for (`ARBOR_METRICS_TOKEN`); without one, only this machine may scrape. */
  readonly metricsToken: Redacted.Redacted | undefined
  /**
   * The header in which a trusted proxy in front of the server passes the client's address
   * (`ARBOR_CLIENT_ADDRESS_HEADER`, e.g. `x-forwarded-for`: its last entry); without it, the connection's address.
   */
  readonly clientAddressHeader: string | undefined
  /**
   * The secret that seals identity providers' client secrets in the store (`ARBOR_SECRETS_KEY`, 32 bytes or more,
   * hex or base64); required on PostgreSQL. On SQLite, without it, a key file in the data directory.
   */
  readonly secretsKey: Redacted.Redacted<Uint8Array> | undefined
  /**
   * Sealing keys being rotated out (`ARBOR_SECRETS_KEY_RETIRED`, comma-separated): they still open what they sealed,
   * and a start seals all of it again under `secretsKey`.
   */
  readonly retiredSecretsKeys: ReadonlyArray<Redacted.Redacted<Uint8Array>>
}

/** Requests a SCIM token may make a minute unless `ARBOR_SCIM_REQUESTS_PER_MINUTE` says otherwise. */
export const defaultScimRequestsPerMinute = 600

/** The clouds' token services: each one set, else the public one; without a trailing slash. */
const cloudEndpointsOf = (
  c: { readonly [K in keyof AccountAssociationCheck.CloudEndpointsService]: string | undefined }
): AccountAssociationCheck.CloudEndpointsService => {
  const defaults = AccountAssociationCheck.CloudEndpoints.defaultValue()
  const pick = (key: keyof AccountAssociationCheck.CloudEndpointsService) =>
    (c[key] ?? defaults[key]).replace(/\/+$/, "")
  return {
    amazonSts: pick("amazonSts"),
    googleSts: pick("googleSts"),
    googleIamCredentials: pick("googleIamCredentials"),
    azureLogin: pick("azureLogin")
  }
}

/** The server's own sign-in provider from its settings: none without `ARBOR_LOGIN_ISSUER`. */
const loginProvider = (c: {
  readonly loginIssuer: string | undefined
  readonly loginClientId: string | undefined
  readonly loginClientSecret: Option.Option<Redacted.Redacted>
  readonly loginClientSecretFile: string | undefined
  readonly loginScopes: string
  readonly allowInsecureIssuers: string | undefined
}): Either.Either<SignIn.LoginProvider | undefined, ConfigError.ConfigError> => {
  if (c.loginIssuer === undefined) return Either.right(undefined)
  const allowLoopback = c.allowInsecureIssuers === "loopback"
  const invalid = IssuerUrl.error(c.loginIssuer, { allowLoopback })
  if (invalid !== undefined) {
    // A provider on this machine is a developer's: say how to allow it.
    const local = !allowLoopback && IssuerUrl.error(c.loginIssuer, { allowLoopback: true }) === undefined
    const fix = local
      ? " (for a provider on this machine, in development, set ARBOR_ALLOW_INSECURE_ISSUERS=loopback)"
      : ""
    return Either.left(ConfigError.InvalidData(["ARBOR_LOGIN_ISSUER"], `${invalid}${fix}`))
  }
  if (c.loginClientId === undefined) {
    return Either.left(ConfigError.MissingData(["ARBOR_LOGIN_CLIENT_ID"], "is required with ARBOR_LOGIN_ISSUER"))
  }
  let secret = Option.getOrUndefined(c.loginClientSecret)
  if (c.loginClientSecretFile !== undefined) {
    try {
      secret = Redacted.make(readFileSync(c.loginClientSecretFile, "utf8").trim())
    } catch (e) {
      return Either.left(
        ConfigError.InvalidData(["ARBOR_LOGIN_CLIENT_SECRET_FILE"], `cannot be read: ${(e as Error).message}`)
      )
    }
  }
  return Either.right({
    issuer: c.loginIssuer,
    clientId: c.loginClientId,
    clientSecret: secret ?? Redacted.make(""),
    scopes: c.loginScopes.split(/[\s,]+/).filter((s) => s !== "")
  })
}

const optional = (name: string) =>
  Config.option(Config.string(name)).pipe(Config.map((o) => o._tag === "Some" ? o.value : undefined))

/** The port to listen on (`PORT`). */
export const port = Config.string("PORT").pipe(
  Config.mapOrFail((text) =>
    /^\d{1,5}$/.test(text) && Number(text) <= 65535
      ? Either.right(Number(text))
      : Either.left(ConfigError.InvalidData([], "must be a port number, 0 to 65535"))
  ),
  Config.withDefault(8080)
)

/** The address to listen on (`ARBOR_HOST`). */
export const host = Config.string("ARBOR_HOST").pipe(Config.withDefault("127.0.0.1"))

/** The configuration from `PORT`, `ARBOR_HOST`, `ARBOR_DATA_DIR`, `ARBOR_STORE`, `ARBOR_BASE_URL`, … */
export const config: Config.Config<ServerConfig> = Config.all({
  port,
  host,
  dataDir: Config.string("ARBOR_DATA_DIR").pipe(Config.withDefault("./.arbor")),
  store: Config.literal("sqlite", "postgres", "memory")("ARBOR_STORE").pipe(Config.withDefault("sqlite" as const)),
  databaseUrl: Config.option(Config.redacted("ARBOR_DATABASE_URL")),
  databasePool: Config.integer("ARBOR_DATABASE_POOL").pipe(
    Config.validate({ message: "must be at least 1", validation: (n) => n >= 1 }),
    Config.withDefault(10)
  ),
  decisionStaleness: Config.option(
    Config.duration("ARBOR_DECISION_STALENESS").pipe(
      Config.validate({
        message: "must be at most a minute",
        validation: (d) => Duration.lessThanOrEqualTo(d, Duration.minutes(1))
      })
    )
  ),
  baseUrl: optional("ARBOR_BASE_URL"),
  authUrl: optional("ARBOR_AUTH_URL"),
  orgName: Config.string("ARBOR_ORG_NAME").pipe(Config.withDefault("default")),
  errorDomain: Config.string("ARBOR_ERROR_DOMAIN").pipe(Config.withDefault("iam.arbor.dev")),
  bootstrapIssuer: optional("ARBOR_BOOTSTRAP_ISSUER"),
  bootstrapSubject: optional("ARBOR_BOOTSTRAP_SUBJECT"),
  seedFile: optional("ARBOR_SEED_FILE"),
  platformAdmins: Config.array(Config.string(), "ARBOR_PLATFORM_ADMINS").pipe(Config.withDefault([])),
  audiences: Config.array(Config.string(), "ARBOR_TOKEN_AUDIENCES").pipe(Config.withDefault([])),
  keyRotationDays: Config.integer("ARBOR_KEY_ROTATION_DAYS").pipe(
    Config.validate({ message: "must be at least 1", validation: (n) => n >= 1 }),
    Config.withDefault(30)
  ),
  eventsRetentionDays: Config.integer("ARBOR_EVENTS_RETENTION_DAYS").pipe(
    Config.validate({ message: "must be at least 1", validation: (n) => n >= 1 }),
    Config.withDefault(ChangeLog.defaultRetentionDays)
  ),
  allowInsecureIssuers: optional("ARBOR_ALLOW_INSECURE_ISSUERS"),
  allowInsecureSinks: optional("ARBOR_ALLOW_INSECURE_SINKS"),
  maxConnections: Config.integer("ARBOR_MAX_CONNECTIONS").pipe(
    Config.validate({ message: "must be at least 1", validation: (n) => n >= 1 }),
    Config.option
  ),
  amazonSts: optional("ARBOR_AWS_STS_URL"),
  googleSts: optional("ARBOR_GOOGLE_STS_URL"),
  googleIamCredentials: optional("ARBOR_GOOGLE_IAM_CREDENTIALS_URL"),
  azureLogin: optional("ARBOR_AZURE_LOGIN_URL"),
  scimRequestsPerMinute: Config.integer("ARBOR_SCIM_REQUESTS_PER_MINUTE").pipe(
    Config.validate({ message: "must be at least 1", validation: (n) => n >= 1 }),
    Config.withDefault(defaultScimRequestsPerMinute)
  ),
  loginIssuer: optional("ARBOR_LOGIN_ISSUER"),
  loginClientId: optional("ARBOR_LOGIN_CLIENT_ID"),
  loginClientSecret: Config.option(Config.redacted("ARBOR_LOGIN_CLIENT_SECRET")),
  loginClientSecretFile: optional("ARBOR_LOGIN_CLIENT_SECRET_FILE"),
  loginScopes: Config.string("ARBOR_LOGIN_SCOPES").pipe(Config.withDefault("")),
  otlpEndpoint: optional("OTEL_EXPORTER_OTLP_ENDPOINT"),
  metricsToken: Config.option(Config.redacted("ARBOR_METRICS_TOKEN")),
  clientAddressHeader: optional("ARBOR_CLIENT_ADDRESS_HEADER"),
  secretsKey: Config.option(Secrets.configKey("ARBOR_SECRETS_KEY")),
  retiredSecretsKeys: Secrets.configKeys("ARBOR_SECRETS_KEY_RETIRED")
}).pipe(
  Config.mapOrFail((c) => {
    for (
      const [name, value] of [
        ["ARBOR_ALLOW_INSECURE_ISSUERS", c.allowInsecureIssuers],
        ["ARBOR_ALLOW_INSECURE_SINKS", c.allowInsecureSinks]
      ] as const
    ) {
      if (value !== undefined && value !== "loopback") {
        return Either.left(ConfigError.InvalidData([name], "must be unset or 'loopback'"))
      }
    }
    if (c.store === "postgres" && Option.isNone(c.databaseUrl)) {
      return Either.left(ConfigError.MissingData(["ARBOR_DATABASE_URL"], "is required when ARBOR_STORE=postgres"))
    }
    if (c.store === "postgres" && Option.isNone(c.secretsKey)) {
      return Either.left(
        ConfigError.MissingData(
          ["ARBOR_SECRETS_KEY"],
          "is required when ARBOR_STORE=postgres: the key that seals secrets in the database is kept outside it"
        )
      )
    }
    const login = loginProvider(c)
    if (Either.isLeft(login)) return Either.left(login.left)
    const baseUrl = (c.baseUrl ?? `http://localhost:${c.port}`).replace(/\/+$/, "")
    return Either.right(
      {
        port: c.port,
        host: c.host,
        dataDir: c.dataDir,
        store: c.store,
        databaseUrl: Option.getOrUndefined(c.databaseUrl),
        databasePool: c.databasePool,
        decisionStaleness: Option.getOrUndefined(c.decisionStaleness),
        baseUrl,
        authUrl: (c.authUrl ?? baseUrl).replace(/\/+$/, ""),
        orgName: c.orgName,
        errorDomain: c.errorDomain,
        bootstrapIssuer: c.bootstrapIssuer,
        bootstrapSubject: c.bootstrapSubject,
        seedFile: c.seedFile,
        platformAdmins: c.platformAdmins,
        audiences: c.audiences,
        keyRotation: Duration.days(c.keyRotationDays),
        eventsRetention: Duration.days(c.eventsRetentionDays),
        allowLoopbackIssuers: c.allowInsecureIssuers === "loopback",
        allowLoopbackSinks: c.allowInsecureSinks === "loopback",
        maxConnections: Option.getOrElse(c.maxConnections, Listener.defaultMaxConnections),
        scimRequestsPerMinute: c.scimRequestsPerMinute,
        cloudEndpoints: cloudEndpointsOf(c),
        login: login.right,
        otlpEndpoint: c.otlpEndpoint,
        metricsToken: Option.getOrUndefined(c.metricsToken),
        clientAddressHeader: c.clientAddressHeader?.toLowerCase(),
        secretsKey: Option.getOrUndefined(Option.map(c.secretsKey, Redacted.make)),
        retiredSecretsKeys: c.retiredSecretsKeys.map((key) => Redacted.make(key))
      } satisfies ServerConfig
    )
  })
)
