/**
 * What every test of `arbor` shares: a server on loopback with an OpenID provider for people (`oidc-provider`) and
 * one for workloads (`oauth2-mock-server`), started for each test file (`useServers`), and the built executable run
 * as a child process in a fresh home, as a person or a workload runs it.
 */
import { Groups, Identities, Principal, Role, RoleBindings } from "@arbor/core"
import * as Effect from "effect/Effect"
import { execFile, spawn } from "node:child_process"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { OAuth2Server } from "oauth2-mock-server"
import { afterAll, assert, beforeAll } from "vitest"
import {
  Browser,
  confirmDevice,
  freePort,
  loginWith,
  startProvider,
  startServer
} from "../../http/test/signInSupport.js"
import { executable } from "./globalSetup.js"

export let server: Awaited<ReturnType<typeof startServer>>
export let provider: Awaited<ReturnType<typeof startProvider>>
export let workloads: OAuth2Server
export let org: string
export let deployer: string

/** Starts the servers of a test file (each file its own), stopped when its tests end. */
export const useServers = () => {
  beforeAll(async () => {
    const port = await freePort()
    provider = await startProvider(`http://127.0.0.1:${port}/oauth/callback`)
    server = await startServer(port, { login: loginWith(provider) })
    workloads = new OAuth2Server()
    await workloads.issuer.keys.generate("RS256")
    await workloads.start(0, "127.0.0.1")
    ;({ deployer, org } = await server.runtime.runPromise(
      Effect.gen(function*() {
        const org = yield* (yield* Groups.Groups).createRoot(Principal.system, { name: "acme" })
        const deployer = yield* (yield* Identities.Identities).create(Principal.system, org.uid, {
          name: "deployer",
          claimMatch: { issuer: workloads.issuer.url!, subject: "repo:acme/app:ref:refs/heads/main" }
        })
        yield* (yield* RoleBindings.RoleBindings).create(Principal.system, org.uid, {
          identityUid: deployer.uid,
          roleUid: Role.builtInByName("editor")!.uid
        })
        return { org: org.uid, deployer: deployer.uid }
      }).pipe(Effect.orDie)
    ))
  }, 30_000)

  afterAll(async () => {
    await server?.close()
    await provider?.close()
    await workloads?.stop()
  })
}

/** A fresh home for the client: its config and cache folders. */
export const home = () => {
  const dir = mkdtempSync(join(tmpdir(), "arbor-cli-"))
  return { XDG_CONFIG_HOME: join(dir, "config"), XDG_CACHE_HOME: join(dir, "cache"), dir }
}

export interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs `arbor` with `args` in `env` (a home, the API's address). */
export const arbor = (env: Record<string, string>, ...args: ReadonlyArray<string>) =>
  new Promise<Run>((resolve) => {
    execFile(process.execPath, [executable, ...args], {
      env: { PATH: process.env.PATH!, ARBOR_API: server.url, NO_COLOR: "1", ...env },
      timeout: 60_000
    }, (error, stdout, stderr) => resolve({ code: error === null ? 0 : (error.code as number), stdout, stderr }))
  })

export const workloadToken = () =>
  workloads.issuer.buildToken({
    scopesOrTransform: (_header, payload) => {
      payload.sub = "repo:acme/app:ref:refs/heads/main"
      payload.aud = server.url
    }
  })

/** A home signed in as the deployer workload, its token in a file. */
export const asDeployer = async () => {
  const env = home()
  const file = join(env.dir, "token")
  writeFileSync(file, await workloadToken())
  const login = await arbor(env, "auth", "login", "--identity", deployer, "--identity-token", file)
  assert.strictEqual(login.code, 0, login.stderr)
  return env
}

/** A home signed in as a workload that owns a fresh organization. */
export const asOwnerOf = async (orgName: string) => {
  const owner = await server.runtime.runPromise(
    Effect.gen(function*() {
      const created = yield* (yield* Groups.Groups).createRoot(Principal.system, { name: orgName })
      const identity = yield* (yield* Identities.Identities).create(Principal.system, created.uid, {
        name: "owner",
        claimMatch: { issuer: workloads.issuer.url!, subject: `owner-of-${orgName}` }
      })
      yield* (yield* RoleBindings.RoleBindings).create(Principal.system, created.uid, {
        identityUid: identity.uid,
        roleUid: Role.builtInByName("owner")!.uid
      })
      return { org: created.uid, identity: identity.uid }
    }).pipe(Effect.orDie)
  )
  return { env: await loggedInAs(owner.identity, `owner-of-${orgName}`), ...owner }
}

/** A home signed in as the identity `uid`, assumed by a workload token of the test issuer with subject `subject`. */
export const loggedInAs = async (uid: string, subject: string) => {
  const env = home()
  const token = await workloads.issuer.buildToken({
    scopesOrTransform: (_header, payload) => {
      payload.sub = subject
      payload.aud = server.url
    }
  })
  const file = join(env.dir, "token")
  writeFileSync(file, token)
  const login = await arbor(env, "auth", "login", "--identity", uid, "--identity-token", file)
  assert.strictEqual(login.code, 0, login.stderr)
  return env
}

/**
 * `arbor auth login` (the browser flow) with `env`, its "system browser" a script that hands the address it is given
 * to the test: that address, and the command's exit and stderr once it ends.
 */
export const loginWithBrowser = async (env: Record<string, string> & { readonly dir: string }) => {
  const opened = join(env.dir, "opened")
  const browserScript = join(env.dir, "browser.sh")
  writeFileSync(browserScript, `#!/bin/sh\necho "$1" > ${opened}\n`, { mode: 0o755 })
  const child = spawn(process.execPath, [executable, "auth", "login"], {
    env: { PATH: process.env.PATH!, ARBOR_API: server.url, BROWSER: browserScript, ...env }
  })
  let stderr = ""
  child.stderr.on("data", (chunk) => (stderr += chunk))
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve))
  let address = ""
  while (address === "") {
    await new Promise((resolve) => setTimeout(resolve, 50))
    try {
      address = readFileSync(opened, "utf8").trim()
    } catch {
      // not yet
    }
  }
  return { address, done: exited.then((code) => ({ code, stderr })) }
}

/**
 * `arbor auth login --headless` with `args` in `env`, while a person opens the address it prints and signs in at
 * the provider as `login`: its exit code and stderr.
 */
export const loginHeadless = async (env: Record<string, string>, login: string, ...args: ReadonlyArray<string>) => {
  const child = spawn(process.execPath, [executable, "auth", "login", "--headless", ...args], {
    env: { PATH: process.env.PATH!, ARBOR_API: server.url, ...env }
  })
  let stderr = ""
  child.stderr.on("data", (chunk) => (stderr += chunk))
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve))
  while (!/\(or open (\S+)\)/.test(stderr)) await new Promise((resolve) => setTimeout(resolve, 50))
  const browser = new Browser()
  const address = /\(or open (\S+)\)/.exec(stderr)![1]!
  await browser.visit(await confirmDevice(browser, address), { login, provider: provider.issuer })
  return { code: await exited, stderr }
}

/** Runs `arbor` with `args` in `env`, `input` on its standard input. */
export const arborWithInput = (env: Record<string, string>, input: string, ...args: ReadonlyArray<string>) =>
  new Promise<Run>((resolve) => {
    const child = execFile(process.execPath, [executable, ...args], {
      env: { PATH: process.env.PATH!, ARBOR_API: server.url, NO_COLOR: "1", ...env },
      timeout: 60_000
    }, (error, stdout, stderr) => resolve({ code: error === null ? 0 : (error.code as number), stdout, stderr }))
    child.stdin!.end(input)
  })

/** `arbor` in `env` for calls that must succeed: `run` answers stdout, `json` the parsed `-o json`. */
export const succeeding = (env: Record<string, string>) => {
  const run = async (...args: ReadonlyArray<string>) => {
    const result = await arbor(env, ...args)
    assert.strictEqual(result.code, 0, `${args.join(" ")}: ${result.stderr}`)
    return result.stdout
  }
  const json = async (...args: ReadonlyArray<string>) => JSON.parse(await run(...args, "-o", "json"))
  return { json, run }
}
