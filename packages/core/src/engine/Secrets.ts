/**
 * Server-side secrets: the key that authenticates page tokens, and the key that seals secrets kept in the store
 * (`Sealing`). Both must survive restarts and be shared by every replica, or what they made stops working; the
 * sealing key must not be kept in the database it protects.
 */
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { randomBytes } from "node:crypto"
import { chmod, link, readFile, unlink, writeFile } from "node:fs/promises"
import * as Sealing from "./Sealing.js"
import type { Table } from "./Store.js"
import { isUniqueViolation, Store } from "./Store.js"

/** The secrets the engine needs. */
export interface SecretsService {
  /** HMAC-SHA256 key for page tokens, at least 32 bytes. */
  readonly pageTokenKey: Redacted.Redacted<Uint8Array>
  /** The keys that seal identity providers' client secrets in the store: the current one, and retired ones. */
  readonly sealing: Sealing.Keys
}

/** Where the engine's secrets come from. */
export class Secrets extends Context.Tag("@arbor/core/Secrets")<Secrets, SecretsService>() {}

/**
 * Secrets from keys the caller holds: the page-token key, and the secrets the sealing keys are derived from (by
 * default the page-token key too, which is then held outside the store as well), the current one first.
 */
export const layer = (
  pageTokenKey: Uint8Array,
  sealingSecret: Uint8Array = pageTokenKey,
  retiredSealingSecrets: ReadonlyArray<Uint8Array> = []
): Layer.Layer<Secrets> =>
  Layer.succeed(Secrets, {
    pageTokenKey: Redacted.make(pageTokenKey),
    sealing: Sealing.keys(sealingSecret, retiredSealingSecrets)
  })

/** Random keys: nothing they made outlives the process. For tests and throwaway instances. */
export const ephemeral = (): SecretsService => ({
  pageTokenKey: Redacted.make(crypto.getRandomValues(new Uint8Array(32))),
  sealing: Sealing.keys(crypto.getRandomValues(new Uint8Array(32)))
})

/** Random keys made at start-up (`ephemeral`). */
export const layerEphemeral: Layer.Layer<Secrets> = Layer.sync(Secrets, ephemeral)

/** Decodes a key written as hex or base64 (standard or url-safe); at least 32 bytes. */
export const parseKey = (text: string): Either.Either<Uint8Array, string> => {
  const trimmed = text.trim()
  const bytes = /^[0-9a-fA-F]+$/.test(trimmed) && trimmed.length % 2 === 0
    ? Buffer.from(trimmed, "hex")
    : Buffer.from(trimmed, "base64")
  return bytes.length >= 32
    ? Either.right(new Uint8Array(bytes))
    : Either.left("must be at least 32 bytes, written as hex or base64")
}

/**
 * The key in the file at `path`, made on first use: 32 random bytes written as hex, with mode 0600, atomically (a
 * whole temporary file linked into place, which fails if the file exists, so processes racing to make it all read
 * the first one's key). A file that holds no key of at least 32 bytes is a defect naming the file.
 */
export const keyFile = (path: string): Effect.Effect<Uint8Array> =>
  Effect.gen(function*() {
    const read = Effect.promise(() =>
      readFile(path, "utf8").catch((e: NodeJS.ErrnoException) => e.code === "ENOENT" ? undefined : Promise.reject(e))
    )
    let text = yield* read
    if (text === undefined) {
      yield* Effect.promise(async () => {
        const temporary = `${path}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`
        await writeFile(temporary, randomBytes(32).toString("hex"), { mode: 0o600 })
        await chmod(temporary, 0o600)
        await link(temporary, path).catch((e: NodeJS.ErrnoException) =>
          e.code === "EEXIST" ? undefined : Promise.reject(e)
        )
        await unlink(temporary)
      })
      text = (yield* read) ?? ""
    }
    const key = parseKey(text)
    return key._tag === "Right" ? key.right : yield* Effect.dieMessage(`${path} ${key.left}`)
  })

/**
 * Secrets from one key file at `path` (made on first use, readable only by its owner): it authenticates page tokens
 * and seals identity providers' client secrets. Keep it beside the database, but out of the database's backups.
 */
export const layerFile = (path: string): Layer.Layer<Secrets> =>
  Layer.unwrapEffect(Effect.map(keyFile(path), (key) => layer(key)))

/**
 * A key (at least 32 bytes, hex or base64) from the configuration value `name`; when it is missing, the error says
 * so in one sentence with a way to make one.
 */
export const configKey = (name: string): Config.Config<Uint8Array> =>
  Config.option(Config.redacted(name)).pipe(
    Config.mapOrFail(Option.match({
      onNone: () =>
        Either.left(
          ConfigError.MissingData(
            [name],
            `is not set: set it to a key of 32 bytes or more, written as hex or base64 (openssl rand -hex 32)`
          )
        ),
      onSome: (value) => Either.mapLeft(parseKey(Redacted.value(value)), (why) => ConfigError.InvalidData([name], why))
    }))
  )

/** Keys (comma-separated) from the configuration value `name`; none when it is unset. */
export const configKeys = (name: string): Config.Config<ReadonlyArray<Uint8Array>> =>
  Config.array(Config.redacted(), name).pipe(
    Config.mapOrFail((values) =>
      Either.all(values.map((value) => parseKey(Redacted.value(value)))).pipe(
        Either.mapLeft((why) => ConfigError.InvalidData([name], why))
      )
    ),
    Config.withDefault([])
  )

/**
 * The keys from the configuration values `ARBOR_PAGE_TOKEN_KEY` and, for sealing, `ARBOR_SECRETS_KEY` (by default
 * the page-token key) and `ARBOR_SECRETS_KEY_RETIRED` (keys that still open what they sealed).
 */
export const layerConfig: Layer.Layer<Secrets, ConfigError.ConfigError> = Layer.unwrapEffect(
  Effect.map(
    Config.all([
      configKey("ARBOR_PAGE_TOKEN_KEY"),
      Config.option(configKey("ARBOR_SECRETS_KEY")),
      configKeys("ARBOR_SECRETS_KEY_RETIRED")
    ]),
    ([pageTokenKey, sealing, retired]) => layer(pageTokenKey, Option.getOrElse(sealing, () => pageTokenKey), retired)
  )
)

/** How secrets are kept in a `Store`: a row per secret, its uid the secret's name, its value hex. */
export const secretsTable: Table = {
  name: "secrets",
  columns: { value: { type: "text" } },
  unique: [],
  indexes: []
}

const pageTokenKeyName = "page-token-key"

/** Writes `key` as the store's page-token key, when a deployment moves to a store (before any process starts on it). */
export const writeStore = (key: Uint8Array) =>
  Effect.flatMap(Store, (store) =>
    store.insert(secretsTable, {
      uid: pageTokenKeyName,
      parent: null,
      value: Buffer.from(key).toString("hex")
    }))

/**
 * The page-token key kept in the engine's store: made by the first process that starts on the database (a second one
 * racing it reads the winner's), so every process on the database shares it and it survives restarts. The sealing
 * keys come from `sealingSecret` and `retiredSealingSecrets`, held outside the store. A store failure is a defect.
 */
export const layerStore = (
  sealingSecret: Uint8Array,
  retiredSealingSecrets: ReadonlyArray<Uint8Array> = []
): Layer.Layer<Secrets, never, Store> =>
  Layer.effect(
    Secrets,
    Effect.gen(function*() {
      const store = yield* Store
      const read = Effect.map(
        store.get(secretsTable, pageTokenKeyName),
        Option.map((row) => Either.getOrThrow(parseKey(String(row.value))))
      )
      const made = crypto.getRandomValues(new Uint8Array(32))
      const key = yield* Effect.flatMap(
        read,
        Option.match({
          onSome: Effect.succeed,
          // Another process may make it first: then theirs is the key.
          onNone: () =>
            Effect.as(writeStore(made), made).pipe(
              Effect.catchIf(isUniqueViolation, () => Effect.flatMap(read, (o) => Effect.orDie(o)))
            )
        })
      )
      return { pageTokenKey: Redacted.make(key), sealing: Sealing.keys(sealingSecret, retiredSealingSecrets) }
    }).pipe(Effect.orDie)
  )
