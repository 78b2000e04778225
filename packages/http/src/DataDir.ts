/**
 * The data directory: the database, the signing keys, the page-token key and the bootstrap token. Secrets are
 * written with mode 0600, atomically (a temporary file renamed into place), and created on first use.
 */
import { Sealing, Secrets, TokenIssuer } from "@arbor/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { chmod, mkdir, open, readdir, readFile, rename, writeFile } from "node:fs/promises"
import { join } from "node:path"

/** File names inside the data directory. */
export const files = {
  database: "arbor.db",
  signingKeys: "signing-keys.json",
  pageTokenKey: "page-token.key",
  secretsKey: "secrets.key",
  bootstrapToken: "bootstrap-token",
  server: "server.json"
} as const

/** What the running server's tokens name, recorded at every start for the admin commands to mint alike. */
export interface ServerAddresses {
  readonly baseUrl: string
  readonly authUrl: string
  readonly audiences: ReadonlyArray<string>
}

/** Records the addresses the server serves under. */
export const writeServerAddresses = (dir: string, addresses: ServerAddresses) =>
  writeSecret(join(dir, files.server), `${JSON.stringify(addresses, null, 2)}\n`)

/** The addresses the server last started with, if it ever did. */
export const readServerAddresses = (dir: string): Effect.Effect<ServerAddresses | undefined> =>
  Effect.map(readIfExists(join(dir, files.server)), (text) => {
    if (text === undefined) return undefined
    const parsed = JSON.parse(text) as Partial<ServerAddresses>
    return typeof parsed.baseUrl === "string" && typeof parsed.authUrl === "string"
      ? { baseUrl: parsed.baseUrl, authUrl: parsed.authUrl, audiences: parsed.audiences ?? [] }
      : undefined
  })

/**
 * Makes the directory private: created 0700, or an existing one tightened to 0700, and its files 0600. With
 * `database`, the SQLite database is created empty (0600) when missing, since SQLite would make it with the
 * process's umask and gives its journal files the database's mode. A directory that cannot be made private stops
 * the start.
 */
export const ensure = (dir: string, options: { readonly database?: boolean } = {}) =>
  Effect.tryPromise({
    try: async () => {
      await mkdir(dir, { recursive: true, mode: 0o700 })
      await chmod(dir, 0o700)
      if (options.database === true) await (await open(join(dir, files.database), "a", 0o600)).close()
      const own = new Set<string>(Object.values(files).flatMap((name) => [name, `${name}-wal`, `${name}-shm`]))
      for (const entry of await readdir(dir, { withFileTypes: true })) {
        if (entry.isFile() && own.has(entry.name)) await chmod(join(dir, entry.name), 0o600)
      }
    },
    catch: (e) => new Error(`the data directory ${dir} cannot be made private (0700, its files 0600): ${e}`)
  }).pipe(Effect.orDie)

/** Writes a secret file with mode 0600, atomically. */
export const writeSecret = (path: string, content: string) =>
  Effect.promise(async () => {
    const temporary = `${path}.${process.pid}.tmp`
    await writeFile(temporary, content, { mode: 0o600 })
    await chmod(temporary, 0o600)
    await rename(temporary, path)
  })

const readIfExists = (path: string) =>
  Effect.promise(() =>
    readFile(path, "utf8").catch((e: NodeJS.ErrnoException) => e.code === "ENOENT" ? undefined : Promise.reject(e))
  )

/** The key in the file `name` of `dir`, created (32 random bytes) on first use. */
const keyFile = (dir: string, name: string) => Secrets.keyFile(join(dir, name))

/** The keys that seal secrets in a deployment's database, as configured. */
export interface SealingSettings {
  /** `ARBOR_SECRETS_KEY`; without it, the key file beside the database (made on first use). */
  readonly current: Redacted.Redacted<Uint8Array> | undefined
  /** `ARBOR_SECRETS_KEY_RETIRED`: keys that still open what they sealed. */
  readonly retired: ReadonlyArray<Redacted.Redacted<Uint8Array>>
}

/**
 * The sealing keys of a deployment in `dir`: the configured key, else its key file (created on first use); a key
 * file that a configured key replaced, and the configured retired keys, still open what they sealed.
 */
export const sealingKeys = (dir: string, settings: SealingSettings) =>
  Effect.gen(function*() {
    const retired = settings.retired.map(Redacted.value)
    if (settings.current === undefined) return Sealing.keys(yield* keyFile(dir, files.secretsKey), retired)
    const text = yield* readIfExists(join(dir, files.secretsKey))
    const file = text === undefined ? undefined : Secrets.parseKey(text)
    return Sealing.keys(Redacted.value(settings.current), [...retired, ...(file?._tag === "Right" ? [file.right] : [])])
  })

/** The secrets of `dir`: its page-token key (created on first use) and its sealing keys (`sealingKeys`). */
export const secretsLayer = (dir: string, sealing: SealingSettings): Layer.Layer<Secrets.Secrets> =>
  Layer.unwrapEffect(Effect.gen(function*() {
    const pageTokenKey = yield* keyFile(dir, files.pageTokenKey)
    const keys = yield* sealingKeys(dir, sealing)
    return Layer.succeed(Secrets.Secrets, { pageTokenKey: Redacted.make(pageTokenKey), sealing: keys })
  }))

/** Signing keys kept in `dir`. */
export const signingKeysLayer = (dir: string): Layer.Layer<TokenIssuer.SigningKeys> =>
  Layer.succeed(TokenIssuer.SigningKeys, {
    load: Effect.map(
      readIfExists(join(dir, files.signingKeys)),
      (text) => text === undefined ? [] : (JSON.parse(text) as { keys: ReadonlyArray<TokenIssuer.SigningKey> }).keys
    ),
    save: (keys) => writeSecret(join(dir, files.signingKeys), JSON.stringify({ keys }, null, 2))
  })
