/**
 * Secrets kept in the store, sealed (docs/api.md §7, "Data at rest"): identity providers' client secrets are
 * encrypted with AES-256-GCM under a key that is not in the database, so a dump or backup of it alone reveals none.
 * A sealed value is `sealed:v1:<key id>:<base64url of nonce, ciphertext and tag>`; the key id (the first bytes of
 * the key's hash) tells a value sealed under another key from a damaged one.
 */
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from "node:crypto"
import { Internal } from "./Errors.js"

const prefix = "sealed:v1:"

/** A key for sealing: 32 bytes derived (HKDF-SHA256) from the configured secret, and its id. */
export interface SealingKey {
  readonly key: Redacted.Redacted<Uint8Array>
  readonly id: string
}

/** The sealing key derived from `secret` (at least 32 bytes). */
export const key = (secret: Uint8Array): SealingKey => {
  const derived = new Uint8Array(hkdfSync("sha256", secret, new Uint8Array(0), "arbor sealed secrets v1", 32))
  return { key: Redacted.make(derived), id: createHash("sha256").update(derived).digest("hex").slice(0, 8) }
}

/** True when `text` is a sealed value (of any key). */
export const isSealed = (text: string): boolean => text.startsWith(prefix)

/** `plaintext` sealed under `sealing`. */
export const seal = (sealing: SealingKey, plaintext: string): string => {
  const nonce = randomBytes(12)
  const cipher = createCipheriv("aes-256-gcm", Redacted.value(sealing.key), nonce)
  const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()])
  const sealed = Buffer.concat([nonce, body, cipher.getAuthTag()]).toString("base64url")
  return `${prefix}${sealing.id}:${sealed}`
}

/**
 * The plaintext of `text` sealed under `sealing`; a value that was never sealed (written before sealing began) as
 * it is. A value sealed under another key, or damaged, is an internal error: the server's key is not the one the
 * data was written with.
 */
export const open = (sealing: SealingKey, text: string): Effect.Effect<string, Internal> => openWith([sealing], text)

/** The plaintext of `text` sealed under one of `keys` (the one its key id names), as `open`. */
export const openWith = (keys: ReadonlyArray<SealingKey>, text: string): Effect.Effect<string, Internal> => {
  if (!isSealed(text)) return Effect.succeed(text)
  const [id, sealed = ""] = text.slice(prefix.length).split(":")
  const sealing = keys.find((k) => k.id === id)
  if (sealing === undefined) {
    return Effect.fail(
      new Internal({ cause: `a secret sealed under key ${id} cannot be opened with key ${keys.map((k) => k.id)}` })
    )
  }
  return Effect.try({
    try: () => {
      const bytes = Buffer.from(sealed, "base64url")
      const decipher = createDecipheriv("aes-256-gcm", Redacted.value(sealing.key), bytes.subarray(0, 12))
      decipher.setAuthTag(bytes.subarray(bytes.length - 16))
      return Buffer.concat([decipher.update(bytes.subarray(12, bytes.length - 16)), decipher.final()]).toString("utf8")
    },
    catch: (cause) => new Internal({ cause })
  })
}
