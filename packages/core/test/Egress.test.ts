/**
 * Outbound requests to caller-named hosts: which addresses count as public, which issuer URLs are read as valid,
 * and that the egress client connects only to checked addresses, resolved once. "Internal" hosts are loopback
 * listeners that record whether anything reached them, and names under `.invalid` that a test resolver maps.
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import { assert, describe, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type { LookupAddress } from "node:dns"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import * as Egress from "../src/engine/internal/egress.js"
import { IssuerUrl, NetworkAddress } from "../src/index.js"
import * as Refusal from "../src/testing/Refusal.js"

describe("NetworkAddress", () => {
  it("tells public addresses from every internal range, in IPv4, IPv6 and the IPv6 forms that carry IPv4", () => {
    const cases: Record<string, NetworkAddress.Kind | undefined> = {
      "8.8.8.8": "public",
      "1.1.1.1": "public",
      "2606:4700:4700::1111": "public",
      "127.0.0.1": "loopback",
      "127.255.0.9": "loopback",
      "::1": "loopback",
      "[::1]": "loopback",
      "0:0:0:0:0:0:0:1": "loopback",
      "::ffff:127.0.0.1": "loopback",
      "::ffff:7f00:1": "loopback",
      "[::ffff:7f00:1]": "loopback",
      "::127.0.0.1": "loopback",
      "64:ff9b::127.0.0.1": "loopback",
      "2002:7f00:1::": "loopback",
      "10.1.2.3": "private",
      "172.16.0.1": "private",
      "172.31.255.255": "private",
      "192.168.1.1": "private",
      "::ffff:10.0.0.1": "private",
      "fd00::1": "private",
      "fc12:3456::1": "private",
      "fec0::1": "private",
      "169.254.169.254": "link-local",
      "::ffff:169.254.169.254": "link-local",
      // IPv4-translated (RFC 2765), by the address they carry.
      "::ffff:0:7f00:1": "loopback",
      "::ffff:0:127.0.0.1": "loopback",
      "::ffff:0:a9fe:a9fe": "link-local",
      "::ffff:0:a00:1": "private",
      "::ffff:0:808:808": "public",
      "fe80::1": "link-local",
      "fe80::1%eth0": "link-local",
      "100.64.0.1": "shared",
      "100.127.255.255": "shared",
      "224.0.0.1": "multicast",
      "ff02::1": "multicast",
      "0.0.0.0": "unspecified",
      "::": "unspecified",
      "255.255.255.255": "reserved",
      "192.0.2.1": "reserved",
      "2001:db8::1": "reserved",
      "2001:0:4136:e378:8000:63bf:3fff:fdd2": "reserved",
      "172.32.0.1": "public",
      "100.128.0.1": "public",
      "0x7f000001": undefined,
      "2130706433": undefined,
      "localhost": undefined,
      "127.attacker.invalid": undefined
    }
    for (const [address, kind] of Object.entries(cases)) assert.strictEqual(NetworkAddress.kind(address), kind, address)
  })
})

describe("IssuerUrl", () => {
  const strict = { allowLoopback: false }
  const loopback = { allowLoopback: true }

  it("accepts canonical https URLs on names and public addresses", () => {
    for (
      const url of [
        "https://token.actions.githubusercontent.com",
        "https://gitlab.com",
        "https://tenant.auth0.invalid/",
        "https://oidc.eks.us-west-2.amazonaws.com/id/EXAMPLED539D4633E53DE1B71EXAMPLE",
        "https://8.8.8.8",
        "https://issuer.invalid:8443/realms/acme"
      ]
    ) assert.isUndefined(IssuerUrl.error(url, strict), url)
  })

  it("refuses anything a fetch could be steered with: other schemes, user info, queries, fragments, odd forms", () => {
    const refused = [
      "http://issuer.invalid",
      "ftp://issuer.invalid",
      "https://user@issuer.invalid",
      "https://user:pass@issuer.invalid",
      "https://issuer.invalid@127.0.0.1",
      "https://issuer.invalid/?x=1",
      "https://issuer.invalid?",
      "https://issuer.invalid/#frag",
      "https://Issuer.invalid",
      "https://issuer.invalid.",
      "https://issuer.invalid:443",
      "https://issuer.invalid\\@evil.invalid",
      "https://issuer.invalid/a/../b",
      "https://issuer.invalid/%2e%2e/x",
      "https:/issuer.invalid",
      " https://issuer.invalid",
      "https://0x7f000001",
      "https://2130706433",
      "https://127.1",
      "https://127.0.0.1",
      "https://[::1]",
      "https://[::ffff:127.0.0.1]",
      "https://[::ffff:0:7f00:1]/",
      "https://[::ffff:0:a9fe:a9fe]",
      "https://localhost",
      "https://169.254.169.254",
      "https://10.0.0.1",
      "https://100.64.0.1",
      "https://[fe80::1]",
      "https://0.0.0.0",
      "not a url"
    ]
    for (const url of refused) assert.isString(IssuerUrl.error(url, strict), url)
  })

  it("allows loopback only as localhost or a loopback literal, and only when configured", () => {
    for (
      const url of ["http://localhost:9000", "http://127.0.0.1:8080/oidc", "http://[::1]:8080", "https://localhost"]
    ) {
      assert.isUndefined(IssuerUrl.error(url, loopback), url)
      assert.isString(IssuerUrl.error(url, strict), url)
    }
    for (
      const url of ["http://127.attacker.invalid", "http://localhost.invalid", "http://10.0.0.1", "http://[fd00::1]"]
    ) {
      assert.isString(IssuerUrl.error(url, loopback), url)
    }
  })

  it("queries only where allowed (documents a discovery document names)", () => {
    assert.isString(IssuerUrl.error("https://issuer.invalid/jwks?v=2", strict))
    assert.isUndefined(IssuerUrl.error("https://issuer.invalid/jwks?v=2", { ...strict, allowQuery: true }))
  })
})

describe("Egress", () => {
  /** A loopback listener that counts the connections it receives, closed with the scope. */
  const listener = Effect.acquireRelease(
    Effect.async<{ readonly port: number; readonly connections: () => number; close: () => void }>((resume) => {
      let connections = 0
      const server = createServer((req, res) =>
        req.url === "/hang"
          ? undefined
          : req.url === "/empty"
          ? res.writeHead(204).end()
          : res.end(JSON.stringify({ ok: true }))
      )
      server.on("connection", () => connections++)
      server.listen(0, "127.0.0.1", () =>
        resume(Effect.succeed({
          port: (server.address() as AddressInfo).port,
          connections: () => connections,
          close: () => server.close()
        })))
    }),
    (l) => Effect.sync(() => l.close())
  )

  /** A resolver from a fixed table, counting its lookups. */
  const resolverOf = (table: Record<string, ReadonlyArray<string>>) => {
    const lookups: Array<string> = []
    const resolve: Egress.Resolve = async (host) => {
      lookups.push(host)
      const found = table[host]
      if (found === undefined) throw Object.assign(new Error(`${host} not found`), { code: "ENOTFOUND" })
      return found.map((address): LookupAddress => ({ address, family: address.includes(":") ? 6 : 4 }))
    }
    return { resolve, lookups }
  }

  const get = (client: HttpClient.HttpClient, url: string) =>
    Effect.either(Effect.scoped(Effect.flatMap(client.get(url), (r) => r.json)))

  const refusedBy = (result: Either.Either<unknown, unknown>) =>
    Either.isLeft(result) ? (result.left as { cause?: { code?: string } }).cause?.code : "ok"

  it.scopedLive("refuses names that resolve to internal addresses without connecting to them", () =>
    Effect.gen(function*() {
      const target = yield* listener
      const { lookups, resolve } = resolverOf({
        "internal.invalid": ["127.0.0.1"],
        "metadata.invalid": ["169.254.169.254"],
        "private.invalid": ["10.0.0.7"],
        "mapped.invalid": ["::ffff:127.0.0.1"],
        "mixed.invalid": ["8.8.8.8", "127.0.0.1"],
        "localhost": ["127.0.0.1"]
      })
      const strict = Egress.make(resolve, false)
      const loopback = Egress.make(resolve, true)
      for (
        const host of ["internal.invalid", "metadata.invalid", "private.invalid", "mapped.invalid", "mixed.invalid"]
      ) {
        for (const client of [strict, loopback]) {
          assert.strictEqual(refusedBy(yield* get(client, `http://${host}:${target.port}/`)), Egress.refusedCode, host)
        }
      }
      for (const literal of ["127.0.0.1", "[::ffff:7f00:1]", "[::1]"]) {
        assert.strictEqual(refusedBy(yield* get(strict, `http://${literal}:${target.port}/`)), Egress.refusedCode)
      }
      assert.strictEqual(refusedBy(yield* get(strict, `http://localhost:${target.port}/`)), Egress.refusedCode)
      assert.strictEqual(target.connections(), 0, "nothing reached the internal listener")
      // With loopback allowed, localhost and loopback literals are reached.
      assert.strictEqual(refusedBy(yield* get(loopback, `http://localhost:${target.port}/`)), "ok")
      assert.strictEqual(refusedBy(yield* get(loopback, `http://127.0.0.1:${target.port}/`)), "ok")
      assert.strictEqual(target.connections(), 2)
      assert.notInclude(lookups, "127.0.0.1", "literals are never looked up")
    }))

  it.scopedLive("resolves once per connection and connects to the address it checked", () =>
    Effect.gen(function*() {
      const target = yield* listener
      let answers = 0
      const lookups: Array<string> = []
      // A rebinding name: loopback at the first answer, a private address at any later one.
      const resolve: Egress.Resolve = async (host) => {
        lookups.push(host)
        return [{ address: answers++ === 0 ? "127.0.0.1" : "10.0.0.7", family: 4 }]
      }
      const client = Egress.make(resolve, true)
      assert.strictEqual(refusedBy(yield* get(client, `http://localhost:${target.port}/`)), "ok")
      assert.deepStrictEqual(lookups, ["localhost"])
      assert.strictEqual(target.connections(), 1)
      assert.strictEqual(refusedBy(yield* get(client, `http://localhost:${target.port}/`)), Egress.refusedCode)
      assert.strictEqual(target.connections(), 1)
    }))

  it.scopedLive("kept-alive connections: reused for the same host, made only to checked addresses", () =>
    Effect.gen(function*() {
      const target = yield* listener
      const { resolve } = resolverOf({ "localhost": ["127.0.0.1"], "internal.invalid": ["127.0.0.1"] })
      const client = Egress.make(resolve, true, { keepAlive: true })
      for (let i = 0; i < 3; i++) {
        assert.strictEqual(refusedBy(yield* get(client, `http://localhost:${target.port}/`)), "ok")
      }
      assert.strictEqual(target.connections(), 1, "one connection for three requests")
      // Answers without a body free their connection too: more of them than the pool holds all go through.
      for (let i = 0; i < 40; i++) {
        const status = yield* Effect.scoped(
          Effect.map(client.get(`http://localhost:${target.port}/empty`), (r) => r.status)
        )
          .pipe(Effect.timeout("2 seconds"))
        assert.strictEqual(status, 204)
      }
      // A name that resolves to loopback is still refused: keeping connections changes what is checked not at all.
      assert.strictEqual(refusedBy(yield* get(client, `http://internal.invalid:${target.port}/`)), Egress.refusedCode)
      assert.strictEqual(target.connections(), 1)
    }))

  it.scopedLive("a sender: the status of each answer over kept connections, checked addresses only, a time limit", () =>
    Effect.gen(function*() {
      const target = yield* listener
      const { resolve } = resolverOf({ "localhost": ["127.0.0.1"], "internal.invalid": ["127.0.0.1"] })
      const send = Egress.makeSender(resolve, true, { keepAlive: true, timeout: Duration.millis(300) })
      const post = (url: string) =>
        send(new URL(url), { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })
      // Answers with and without a body, more than the pool holds, over one connection.
      for (let i = 0; i < 40; i++) {
        assert.strictEqual(yield* post(`http://localhost:${target.port}/empty`), 204)
        assert.strictEqual(yield* post(`http://localhost:${target.port}/`), 200)
      }
      assert.strictEqual(target.connections(), 1)
      const refused = yield* Refusal.of(post(`http://internal.invalid:${target.port}/`))
      assert.strictEqual((refused as { code?: string }).code, Egress.refusedCode)
      const private10 = yield* Refusal.of(post(`http://10.0.0.7:${target.port}/`))
      assert.strictEqual((private10 as { code?: string }).code, Egress.refusedCode)
      const hung = yield* Refusal.of(post(`http://localhost:${target.port}/hang`))
      assert.match(hung.message, /no answer within 300 ms/)
    }))
})
