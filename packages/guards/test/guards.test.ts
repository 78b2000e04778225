/**
 * The guards in real servers of their frameworks (Express, Hono on @hono/node-server, an HttpApi on
 * @effect/platform-node), each on loopback over one engine: 401 without a token, 403 with the engine's error body
 * without the capability, 200 with it; and a revoked binding refuses the next request.
 */
import {
  Access,
  Arbor,
  Authentication,
  Groups,
  Identities,
  Principal,
  Role,
  RoleBindings,
  TokenIssuer,
  type Uid
} from "@arbor/core"
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { serve } from "@hono/node-server"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Schema from "effect/Schema"
import express from "express"
import { Hono } from "hono"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { Express as ExpressGuard, Guard, Hono as HonoGuard, HttpApiGuard } from "../src/index.js"

const tokens = TokenIssuer.TokenIssuer.Default.pipe(
  Layer.provide(TokenIssuer.SigningKeys.layerMemory),
  Layer.provide(Layer.succeed(TokenIssuer.TokenSettings, {
    issuer: "https://auth.example.com",
    audience: "https://api.example.com"
  }))
)
const engineLayer = Authentication.Authentication.Default.pipe(
  Layer.provideMerge(Arbor.layerMemory),
  Layer.provideMerge(tokens)
)

/** A service of one's own, guarded by HttpApi: create a repo in a group. */
const Api = HttpApi.make("mine").add(
  HttpApiGroup.make("repos").add(
    HttpApiEndpoint.post("create", "/groups/:group/repos")
      .setPath(Schema.Struct({ group: Schema.String }))
      .addSuccess(Schema.Struct({ by: Schema.String }))
      .addError(HttpApiGuard.Forbidden)
  ).middleware(HttpApiGuard.ArborBearer)
)

let engine: ManagedRuntime.ManagedRuntime<
  Arbor.Services | Authentication.Authentication | TokenIssuer.TokenIssuer,
  never
>
let effectServer: ManagedRuntime.ManagedRuntime<HttpServer.HttpServer, unknown>
const servers: Array<Server> = []
const bases: Record<string, string> = {}
let seeded: { prod: Uid.Uid; staging: Uid.Uid; token: string; binding: Uid.Uid; deployer: Uid.Uid }

const listen = async (server: Server) => {
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

beforeAll(async () => {
  engine = ManagedRuntime.make(engineLayer)
  seeded = await engine.runPromise(
    Effect.gen(function*() {
      const groups = yield* Groups.Groups
      const org = yield* groups.createRoot(Principal.system, { name: "acme" })
      const prod = yield* groups.create(Principal.system, org.uid, { name: "prod" })
      const staging = yield* groups.create(Principal.system, org.uid, { name: "staging" })
      const deployer = yield* (yield* Identities.Identities).create(Principal.system, org.uid, {
        name: "deployer",
        claimMatch: {
          issuer: "https://token.actions.githubusercontent.com",
          subject: "repo:acme/app:ref:refs/heads/main"
        }
      })
      const binding = yield* (yield* RoleBindings.RoleBindings).create(Principal.system, prod.uid, {
        identityUid: deployer.uid,
        roleUid: Role.builtInByName("editor")!.uid
      })
      const minted = yield* (yield* TokenIssuer.TokenIssuer).mint(deployer.uid, {
        iss: "https://ci.example.com",
        sub: "ci"
      })
      return { prod: prod.uid, staging: staging.uid, token: minted.token, binding: binding.uid, deployer: deployer.uid }
    }).pipe(Effect.orDie)
  )
  const guard = Guard.make(engine)

  const app = express()
  app.post(
    "/groups/:group/repos",
    ExpressGuard.requireCapability(guard, "repo.create", (request) => String(request.params.group)),
    (_request, response) => {
      response.json({ by: response.locals.arborPrincipal.uid })
    }
  )
  bases.express = await listen(createServer(app))

  const hono = new Hono<{ Variables: HonoGuard.Variables }>()
  hono.post(
    "/groups/:group/repos",
    HonoGuard.requireCapability(guard, "CAP_REPO_CREATE", (c) => c.req.param("group") ?? ""),
    (c) => {
      const principal = c.get("arborPrincipal")
      return c.json({ by: principal._tag === "Identity" ? principal.uid : "system" })
    }
  )
  const honoServer = serve({ fetch: hono.fetch, port: 0, hostname: "127.0.0.1" })
  await new Promise<void>((resolve) => honoServer.once("listening", () => resolve()))
  servers.push(honoServer as Server)
  bases.hono = `http://127.0.0.1:${(honoServer.address() as AddressInfo).port}`

  const context = (await engine.runtime()).context
  const handlers = HttpApiBuilder.group(
    Api,
    "repos",
    (h) =>
      h.handle(
        "create",
        ({ path }) =>
          Effect.map(HttpApiGuard.requireCapability("repo.create", path.group), (principal) => ({
            by: principal._tag === "Identity" ? principal.uid : "system"
          }))
      )
  )
  effectServer = ManagedRuntime.make(
    HttpApiBuilder.serve().pipe(
      Layer.provide(HttpApiBuilder.api(Api).pipe(Layer.provide(handlers), Layer.provide(HttpApiGuard.layer))),
      Layer.provide(Layer.succeedContext(context)),
      Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
    )
  )
  const address = (await effectServer.runPromise(HttpServer.HttpServer)).address
  bases.httpApi = address._tag === "TcpAddress" ? `http://127.0.0.1:${address.port}` : ""
}, 30_000)

afterAll(async () => {
  await effectServer?.dispose()
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))))
  await engine?.dispose()
})

const post = async (base: string, group: string, token?: string) => {
  // A uid's slashes travel escaped in one path segment; each framework decodes its parameter.
  const response = await fetch(`${base}/groups/${encodeURIComponent(group)}/repos`, {
    method: "POST",
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` }
  })
  const text = await response.text()
  let body: any
  try {
    body = JSON.parse(text)
  } catch {
    throw new Error(`${base}: ${response.status} ${text.slice(0, 800)}`)
  }
  return { status: response.status, headers: response.headers, body }
}

describe.each(["express", "hono", "httpApi"])("the %s guard", (framework) => {
  it("401 without a token, 403 with the engine's error body without the capability, 200 with it", async () => {
    const base = bases[framework]!
    const anonymous = await post(base, seeded.prod)
    assert.strictEqual(anonymous.status, 401)
    assert.strictEqual(anonymous.headers.get("www-authenticate"), "Bearer")
    assert.strictEqual(anonymous.body.code, 16)
    const forged = await post(base, seeded.prod, `${seeded.token.slice(0, -4)}AAAA`)
    assert.strictEqual(forged.status, 401)
    const elsewhere = await post(base, seeded.staging, seeded.token)
    assert.strictEqual(elsewhere.status, 403)
    assert.strictEqual(elsewhere.body.code, 7)
    assert.strictEqual(
      elsewhere.body.message,
      `Permission 'repo.create' denied on resource '${seeded.staging}' (or it might not exist)`
    )
    const allowed = await post(base, seeded.prod, seeded.token)
    assert.deepStrictEqual([allowed.status, allowed.body], [200, { by: seeded.deployer }])
  })
})

describe("a guard", () => {
  it("decides from the current bindings: a revoked binding refuses the next request on every framework", async () => {
    await engine.runPromise(
      Effect.flatMap(RoleBindings.RoleBindings, (bindings) => bindings.delete(Principal.system, seeded.binding))
    )
    for (const base of Object.values(bases)) {
      assert.strictEqual((await post(base, seeded.prod, seeded.token)).status, 403)
    }
    // Restored for any test after this one.
    const restored = await engine.runPromise(
      Effect.flatMap(RoleBindings.RoleBindings, (bindings) =>
        bindings.create(Principal.system, seeded.prod, {
          identityUid: seeded.deployer,
          roleUid: Role.builtInByName("editor")!.uid
        })).pipe(Effect.orDie)
    )
    seeded = { ...seeded, binding: restored.uid }
    assert.isTrue(
      await engine.runPromise(
        Effect.flatMap(
          Access.Access,
          (access) => access.can(Principal.identity(restored.identity.uid), "repo.create", seeded.prod)
        )
      )
    )
  })

  it("refuses a capability that does not exist when the guard is made", () => {
    assert.throws(
      () => ExpressGuard.requireCapability(Guard.make(engine), "repo.fly", () => ""),
      /'repo.fly' is not an Arbor capability/
    )
  })
})

describe("the packed packages' example", () => {
  it("guards an Express route: 401 without a token or with a forged one, 200 with the engine's", async () => {
    const { statuses } = await import("./examples/guarded.js")
    assert.deepStrictEqual(await statuses(), { withoutToken: 401, withToken: 200, withForgedToken: 401 })
  })
})
