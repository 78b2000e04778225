/**
 * Server-side secrets: the key that authenticates page tokens. It must survive restarts and be shared by every
 * replica, or tokens handed out earlier stop working.
 */
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"

/** The secrets the engine needs. */
export interface SecretsService {
  /** HMAC-SHA256 key for page tokens, at least 32 bytes. */
  readonly pageTokenKey: Redacted.Redacted<Uint8Array>
}

/** Where the engine's secrets come from. */
export class Secrets extends Context.Tag("@arbor/core/Secrets")<Secrets, SecretsService>() {}

/** Secrets from a key the caller holds. */
export const layer = (pageTokenKey: Uint8Array): Layer.Layer<Secrets> =>
  Layer.succeed(Secrets, { pageTokenKey: Redacted.make(pageTokenKey) })

/** A random key made at start-up: page tokens do not outlive the process. For tests and throwaway instances. */
export const layerEphemeral: Layer.Layer<Secrets> = Layer.sync(
  Secrets,
  () => ({ pageTokenKey: Redacted.make(crypto.getRandomValues(new Uint8Array(32))) })
)

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

/** The key from the `ARBOR_PAGE_TOKEN_KEY` configuration value. */
export const layerConfig: Layer.Layer<Secrets, ConfigError.ConfigError> = Layer.effect(
  Secrets,
  Effect.map(
    Config.redacted("ARBOR_PAGE_TOKEN_KEY").pipe(
      Config.mapOrFail((value) =>
        Either.mapLeft(parseKey(Redacted.value(value)), (why) => ConfigError.InvalidData([], why))
      )
    ),
    (key) => ({ pageTokenKey: Redacted.make(key) })
  )
)
