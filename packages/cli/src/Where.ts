/**
 * Where the client talks to, and where it keeps what it knows: the API and the token service (flags, then
 * `ARBOR_API`/`ARBOR_ISSUER`, then the config file `$XDG_CONFIG_HOME/arbor/config.yaml`, then
 * `http://localhost:8080`), the config file itself, and the token cache `$XDG_CACHE_HOME/arbor/<audience>/`.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { homedir } from "node:os"
import { dirname, join } from "node:path"

/** The API's address when nothing says otherwise. */
export const defaultApi = "http://localhost:8080"

/** The settings the config file may hold. */
export const settingNames = ["api", "issuer"] as const
export type SettingName = typeof settingNames[number]

const configHome = () => process.env.XDG_CONFIG_HOME || join(homedir(), ".config")
const cacheHome = () => process.env.XDG_CACHE_HOME || join(homedir(), ".cache")

/** The config file. */
export const configFile = () => join(configHome(), "arbor", "config.yaml")

/** The config file's settings: `name: value` lines (a flat YAML mapping); none when it does not exist. */
export const readConfig = (): Partial<Record<SettingName, string>> => {
  const file = configFile()
  if (!existsSync(file)) return {}
  const settings: Partial<Record<SettingName, string>> = {}
  for (const line of readFileSync(file, "utf8").split("\n")) {
    const match = /^([a-z]+):\s*(.*?)\s*$/.exec(line)
    if (match !== null && (settingNames as ReadonlyArray<string>).includes(match[1]!)) {
      settings[match[1] as SettingName] = match[2]!.replace(/^(["'])(.*)\1$/, "$2")
    }
  }
  return settings
}

/** Writes one setting into the config file, keeping the others. */
export const writeSetting = (name: SettingName, value: string) => {
  const settings = { ...readConfig(), [name]: value }
  const file = configFile()
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(
    file,
    settingNames.flatMap((n) => settings[n] === undefined ? [] : [`${n}: ${JSON.stringify(settings[n])}`]).join("\n") +
      "\n"
  )
}

/** The API's and the token service's addresses. */
export interface Endpoints {
  readonly api: string
  readonly issuer: string
}

const trim = (url: string) => url.replace(/\/+$/, "")

/** The addresses, from the flags when given, else the environment, the config file, or the defaults (empty is unset). */
export const endpoints = (flags: { readonly api: Option.Option<string>; readonly issuer: Option.Option<string> }) =>
  Effect.sync((): Endpoints => {
    const config = readConfig()
    const api = trim(Option.getOrUndefined(flags.api) || process.env.ARBOR_API || config.api || defaultApi)
    const issuer = trim(Option.getOrUndefined(flags.issuer) || process.env.ARBOR_ISSUER || config.issuer || api)
    return { api, issuer }
  })

/** The files the client keeps for one audience (its API), readable by its user only. */
export const cache = (audience: string) => {
  const dir = join(cacheHome(), "arbor", encodeURIComponent(audience))
  const path = (name: CacheFile) => join(dir, name)
  return {
    dir,
    read: (name: CacheFile): string | undefined =>
      existsSync(path(name)) ? readFileSync(path(name), "utf8").trim() : undefined,
    write: (name: CacheFile, value: string) => {
      mkdirSync(dir, { recursive: true, mode: 0o700 })
      chmodSync(dir, 0o700)
      writeFileSync(path(name), `${value}\n`, { mode: 0o600 })
      chmodSync(path(name), 0o600)
    }
  }
}

/** What the cache holds: the API token, the refresh token, and how a workload signed in (to exchange again). */
export type CacheFile = "token" | "refresh-token" | "workload"
