/**
 * `POST /sts/exchange_refresh_token`: a person's refresh token (the bearer) for an API token and its successor;
 * a refresh token works once, and presenting it again revokes its family.
 */
import { RefreshTokens } from "@arbor/core"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { call, member, testServer } from "./support.js"

describe("refresh tokens over HTTP", () => {
  it.scopedLive("exchange once for an API token and the next refresh token; a second use revokes the family", () =>
    Effect.gen(function*() {
      const { identity, org } = yield* member("acme")
      const issued = yield* (yield* RefreshTokens.RefreshTokens).issue(identity as never, "http://localhost:8080")
      const exchange = (token?: string, query = "") =>
        call("POST", `/sts/exchange_refresh_token${query}`, token === undefined ? {} : { token })

      const first = yield* exchange(issued.token)
      assert.strictEqual(first.status, 200)
      assert.match(first.body.token.expiry, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
      assert.notStrictEqual(first.body.refreshToken.token, issued.token)
      assert.strictEqual(
        (yield* call("GET", `/iam/v2beta1/groups/${org}`, { token: first.body.token.token })).status,
        200
      )

      const second = yield* exchange(first.body.refreshToken.token, "?aud=http%3A%2F%2Flocalhost%3A8080")
      assert.strictEqual(second.status, 200)
      const reused = yield* exchange(issued.token)
      assert.strictEqual(reused.status, 401)
      assert.strictEqual(reused.body.details[0].reason, "REFRESH_TOKEN_REUSED")
      assert.strictEqual((yield* exchange(second.body.refreshToken.token)).status, 401, "the family is revoked")
      assert.strictEqual((yield* exchange(undefined)).status, 401)
      assert.strictEqual((yield* exchange("nope", "?aud=https%3A%2F%2Felsewhere.invalid")).status, 401)
    }).pipe(Effect.provide(testServer())))

  it.scopedLive("narrows the API token as the exchange does; a bad narrowing leaves the refresh token unused", () =>
    Effect.gen(function*() {
      const { identity, org } = yield* member("acme")
      const issued = yield* (yield* RefreshTokens.RefreshTokens).issue(identity as never, "http://localhost:8080")
      const refused = yield* call("POST", "/sts/exchange_refresh_token?cap=groups.fly", { token: issued.token })
      assert.strictEqual(refused.status, 400)
      assert.match(JSON.stringify(refused.body), /"field":"cap"/)
      const narrowed = yield* call("POST", `/sts/exchange_refresh_token?cap=groups.list&scope=${org}`, {
        token: issued.token
      })
      assert.strictEqual(narrowed.status, 200, "the refused attempt did not use the refresh token")
      const token = narrowed.body.token.token as string
      const claims = JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString())
      assert.deepStrictEqual([claims.cap, claims.scopes], [["groups.list"], [org]])
      assert.strictEqual((yield* call("GET", `/iam/v2beta1/groups/${org}`, { token })).status, 200)
      assert.strictEqual(
        (yield* call("POST", `/iam/v2beta1/groups/${org}`, { token, body: { name: "x" } })).status,
        403
      )
    }).pipe(Effect.provide(testServer())))
})
