/**
 * The data directory: the database, the signing keys, the page-token key and the bootstrap token. Secrets are
 * written with mode 0600, atomically (a temporary file renamed into place), and created on first use.
 */
import { Secrets, TokenIssuer } from "@arbor/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { randomBytes } from "node:crypto"
import { chmod, mkdir, readFile, rename, writeFile } from "node:fs/promises"
import { join } from "node:path"

/** File names inside the data directory. */
export const files = {
  database: "arbor.db",
  signingKeys: "signing-keys.json",
  pageTokenKey: "page-token.key",
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

/** Creates the directory (mode 0700) if it does not exist. */
export const ensure = (dir: string) =>
  Effect.promise(() => mkdir(dir, { recursive: true, mode: 0o700 })).pipe(Effect.asVoid)

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

/** The page-token key of `dir`, created (32 random bytes) on first use. */
export const secretsLayer = (dir: string): Layer.Layer<Secrets.Secrets> =>
  Layer.unwrapEffect(Effect.gen(function*() {
    const path = join(dir, files.pageTokenKey)
    let text = yield* readIfExists(path)
    if (text === undefined) {
      text = randomBytes(32).toString("hex")
      yield* writeSecret(path, text)
    }
    const key = Secrets.parseKey(text)
    if (key._tag === "Left") return yield* Effect.dieMessage(`${path} ${key.left}`)
    return Secrets.layer(key.right)
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
