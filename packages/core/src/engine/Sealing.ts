/**
 * Secrets kept in the store, sealed (docs/api.md §7, "Data at rest"): identity providers' client secrets are
 * encrypted with AES-256-GCM under a key that is not in the database, so a dump or backup of it alone reveals none.
 * A sealed value is `sealed:v1:<key id>:<base64url of nonce, ciphertext and tag>`; the key id (the first bytes of
 * the key's hash) says which key opens it, so keys can be rotated: values are sealed under the current key and
 * opened under it or a retired one, until every value has been sealed again (`needsSealing`).
 */
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from "node:crypto"
import { type Internal, internal } from "./Errors.js"

const prefix = "sealed:v1:"

/** A key for sealing: 32 bytes derived (HKDF-SHA256) from a configured secret, and its id. */
export interface SealingKey {
  readonly key: Redacted.Redacted<Uint8Array>
  readonly id: string
}

/** The key that seals, and the retired ones that still open what they sealed. */
export interface Keys {
  readonly current: SealingKey
  readonly retired: ReadonlyArray<SealingKey>
}

/** The sealing key derived from `secret` (at least 32 bytes). */
export const key = (secret: Uint8Array): SealingKey => {
  const derived = new Uint8Array(hkdfSync("sha256", secret, new Uint8Array(0), "arbor sealed secrets v1", 32))
  return { key: Redacted.make(derived), id: createHash("sha256").update(derived).digest("hex").slice(0, 8) }
}

/** Keys from the secret of the current key and those of retired ones (none but the current are used to seal). */
export const keys = (current: Uint8Array, retired: ReadonlyArray<Uint8Array> = []): Keys => {
  const currentKey = key(current)
  return { current: currentKey, retired: retired.map(key).filter((k) => k.id !== currentKey.id) }
}

/** True when `text` is a sealed value (of any key). */
export const isSealed = (text: string): boolean => text.startsWith(prefix)

const idOf = (text: string) => text.slice(prefix.length, text.indexOf(":", prefix.length))

/** True when `text` is not sealed under the current key: stored before sealing began, or under a retired key. */
export const needsSealing = (sealing: Keys, text: string): boolean =>
  !isSealed(text) || idOf(text) !== sealing.current.id

/** `plaintext` sealed under the current key. */
export const seal = (sealing: Keys, plaintext: string): string => {
  const nonce = randomBytes(12)
  const cipher = createCipheriv("aes-256-gcm", Redacted.value(sealing.current.key), nonce)
  const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()])
  const sealed = Buffer.concat([nonce, body, cipher.getAuthTag()]).toString("base64url")
  return `${prefix}${sealing.current.id}:${sealed}`
}

/**
 * The plaintext of `text`, opened with the key its id names (the current one or a retired one); a value that was
 * never sealed (written before sealing began) as it is. A value sealed under a key not among `sealing`, or damaged,
 * is an internal error: the server does not hold the key the data was written with.
 */
export const open = (sealing: Keys, text: string): Effect.Effect<string, Internal> => {
  if (!isSealed(text)) return Effect.succeed(text)
  const id = idOf(text)
  const opener = [sealing.current, ...sealing.retired].find((k) => k.id === id)
  if (opener === undefined) {
    return internal(`a secret is sealed under key ${id}, which this server does not hold`)
  }
  return Effect.try({
    try: () => {
      const bytes = Buffer.from(text.slice(prefix.length + id.length + 1), "base64url")
      const decipher = createDecipheriv("aes-256-gcm", Redacted.value(opener.key), bytes.subarray(0, 12))
      decipher.setAuthTag(bytes.subarray(bytes.length - 16))
      return Buffer.concat([decipher.update(bytes.subarray(12, bytes.length - 16)), decipher.final()]).toString("utf8")
    },
    catch: (cause) => cause
  }).pipe(Effect.catchAll((cause) => internal(cause)))
}
