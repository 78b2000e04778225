import { Arbor, Authentication, Groups, Identities, Principal, Role, RoleBindings, TokenIssuer } from "@arbor/core"
import { Express, Guard } from "@arbor/guards"
import { Effect, Layer, ManagedRuntime } from "effect"
import express from "express"
import type { AddressInfo } from "node:net"

// The engine in memory, with its token issuer: the tokens it mints are the ones the guard accepts.
const engine = ManagedRuntime.make(
  Authentication.Authentication.Default.pipe(
    Layer.provideMerge(Arbor.layerMemory),
    Layer.provideMerge(TokenIssuer.TokenIssuer.Default),
    Layer.provide(TokenIssuer.SigningKeys.layerMemory),
    Layer.provide(Layer.succeed(TokenIssuer.TokenSettings, {
      issuer: "https://auth.example.com",
      audience: "https://api.example.com"
    }))
  )
)

/** An Express route guarded by the engine; the statuses of three requests to it. */
export const statuses = async () => {
  const { prod, token } = await engine.runPromise(Effect.gen(function*() {
    const groups = yield* Groups.Groups
    const org = yield* groups.createRoot(Principal.system, { name: "acme" })
    const prod = yield* groups.create(Principal.system, org.uid, { name: "prod" })
    const ci = yield* (yield* Identities.Identities).create(Principal.system, org.uid, {
      name: "ci",
      claimMatch: {
        issuer: "https://token.actions.githubusercontent.com",
        subject: "repo:acme/app:ref:refs/heads/main"
      }
    })
    yield* (yield* RoleBindings.RoleBindings).create(Principal.system, prod.uid, {
      identityUid: ci.uid,
      roleUid: Role.builtInByName("editor")!.uid
    })
    const minted = yield* (yield* TokenIssuer.TokenIssuer).mint(ci.uid, { iss: "https://ci.example.com", sub: "ci" })
    return { prod: prod.uid, token: minted.token }
  }))

  const app = express()
  app.post(
    "/groups/:group/repos",
    Express.requireCapability(Guard.make(engine), "repo.create", (req) => String(req.params.group)),
    (_req, res) => {
      res.json({ created: true })
    }
  )
  const server = app.listen(0, "127.0.0.1")
  await new Promise((resolve) => server.once("listening", resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/groups/${encodeURIComponent(prod)}/repos`
  const post = (headers: Record<string, string>) => fetch(url, { method: "POST", headers }).then((r) => r.status)
  try {
    return {
      withoutToken: await post({}),
      withToken: await post({ authorization: `Bearer ${token}` }),
      withForgedToken: await post({ authorization: `Bearer ${token.slice(0, -4)}AAAA` })
    }
  } finally {
    server.close()
    await engine.dispose()
  }
}
