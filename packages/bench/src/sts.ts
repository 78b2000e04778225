/**
 * The token exchange under load: exchanges per second over HTTP (the server on SQLite, the upstream issuer's keys
 * cached), beside the same verification and signing done with `jose` in a plain loop in this process (the crypto
 * floor), in alternating rounds of the same run.
 */
import * as jose from "jose"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer, type Server } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Comparison, Figure } from "./Harness.js"
import { section } from "./Harness.js"
import { type Arbor, type Load, load, median, startArbor } from "./Servers.js"

const audience = "arbor-bench"
const subject = "repo:acme/app:ref:refs/heads/main"

/** An OIDC issuer on loopback with one RS256 key, as GitHub, GitLab and Kubernetes sign. */
const upstreamIssuer = async () => {
  const { privateKey, publicKey } = await jose.generateKeyPair("RS256", { extractable: true })
  const publicJwk = { ...(await jose.exportJWK(publicKey)), kid: "bench", alg: "RS256", use: "sig" }
  const server: Server = createServer()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const issuer = `http://127.0.0.1:${(server.address() as { port: number }).port}`
  server.on("request", (req, res) => {
    const body = req.url === "/.well-known/openid-configuration"
      ? { issuer, jwks_uri: `${issuer}/jwks` }
      : { keys: [publicJwk] }
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body))
  })
  const token = await new jose.SignJWT({ repository: "acme/app", ref: "refs/heads/main" })
    .setProtectedHeader({ alg: "RS256", kid: "bench", typ: "JWT" })
    .setIssuer(issuer).setSubject(subject).setAudience(audience).setIssuedAt().setExpirationTime("2h")
    .sign(privateKey)
  return { issuer, token, publicJwk, server }
}

/** Runs the suite; returns its report section. */
export const run = async (scale: number): Promise<string> => {
  const dir = mkdtempSync(join(tmpdir(), "arbor-bench-sts-"))
  const upstream = await upstreamIssuer()
  let arbor: Arbor | undefined
  try {
    arbor = await startArbor(join(dir, ".arbor"), { ARBOR_ALLOW_INSECURE_ISSUERS: "loopback" })
    const created = await fetch(`${arbor.base}/iam/v2beta1/identities/${arbor.org}`, {
      method: "POST",
      headers: { authorization: `Bearer ${arbor.token}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "workload", claimMatch: { issuer: upstream.issuer, subject, audience } })
    })
    const identity = ((await created.json()) as { uid: string }).uid
    const url = `${arbor.base}/sts/exchange?aud=${encodeURIComponent(arbor.base)}&identity=${identity}`

    // The floor: what an exchange cannot avoid, verifying the upstream token and signing an ES256 token.
    const keys = jose.createLocalJWKSet({ keys: [upstream.publicJwk] })
    const { privateKey } = await jose.generateKeyPair("ES256")
    const floor = async (seconds: number) => {
      let n = 0
      const end = performance.now() + seconds * 1000
      while (performance.now() < end) {
        const { payload } = await jose.jwtVerify(upstream.token, keys, {
          algorithms: ["RS256"],
          issuer: upstream.issuer,
          audience,
          requiredClaims: ["exp"]
        })
        await new jose.SignJWT({ act: { iss: payload.iss, sub: payload.sub, aud: payload.aud } })
          .setProtectedHeader({ alg: "ES256", kid: "k", typ: "JWT" })
          .setIssuer(arbor!.base).setSubject(identity).setAudience(arbor!.base).setIssuedAt().setExpirationTime("1h")
          .setJti(crypto.randomUUID())
          .sign(privateKey)
        n++
      }
      return n / seconds
    }

    const seconds = Math.max(3, Math.round(10 * Math.min(scale, 1)))
    const rounds = 3
    await load(url, upstream.token, 2)
    await floor(2)
    const ours: Array<Load> = []
    const floors: Array<number> = []
    for (let r = 0; r < rounds; r++) {
      floors.push(await floor(seconds))
      ours.push(await load(url, upstream.token, seconds))
    }
    const rps = median(ours.map((l) => l.rps))
    const floorRate = median(floors)
    const p99 = median(ours.map((l) => l.p99))
    console.log(`exchange: ours ${rps.toFixed(0)}/s (p99 ${p99} ms), jose loop ${floorRate.toFixed(0)}/s`)

    const comparisons: Array<Comparison> = [{
      name: "token exchange (ms per exchange)",
      ours: 1000 / rps,
      baseline: 1000 / floorRate,
      baselineName: "jose verify RS256 + sign ES256"
    }]
    const figures: Array<Figure> = [
      {
        name: "exchanges per second, ours over HTTP / jose loop",
        value: `${rps.toFixed(0)} / ${floorRate.toFixed(0)} = ${(rps / floorRate).toFixed(3)}`,
        target: "≥ 0.33",
        met: rps / floorRate >= 0.33
      },
      { name: "exchange: p99 latency (50 connections)", value: `${p99} ms` }
    ]
    return section(
      "Token exchange",
      [
        "Our server (`node packages/http/dist/main.js`, SQLite) exchanging an RS256 upstream token of a loopback issuer",
        "(its keys cached after the first exchange; `lastSeenTime` recorded for every exchange, written in batches)",
        "for an ES256 API token; autocannon with 50 connections. Floor: `jose.jwtVerify` of the same token and",
        `\`SignJWT\` of the same claims in a loop in the bench process. ${rounds} alternating rounds of ${seconds} s, medians.`
      ],
      comparisons,
      figures
    )
  } finally {
    arbor?.child.kill("SIGTERM")
    upstream.server.close()
    rmSync(dir, { recursive: true, force: true })
  }
}
