/**
 * The HTTP server under load: an authenticated GET of a group and a 50-item list page, on SQLite, beside a bare
 * `node:http` server answering the same bytes from memory (the floor), each in its own process, driven by
 * autocannon from this one, in alternating rounds of the same run. For the GET, also beside the framework's floor:
 * an `HttpApi` server with that one route answering those bytes (`frameworkFloor.ts`).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import type { Comparison, Figure } from "./Harness.js"
import { section } from "./Harness.js"
import { freePort, type Load, load, median, startArbor, waitReady } from "./Servers.js"

/** A bare server answering fixed bytes per path: what a response costs with nothing behind it. */
const bareServer = `
const http = require("node:http")
const responses = JSON.parse(process.env.RESPONSES)
http.createServer((req, res) => {
  const body = responses[req.url.split("?")[0]] ?? "{}"
  res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
  res.end(body)
}).listen(Number(process.env.PORT), "127.0.0.1")
`

/** Runs the suite; returns its report section. */
export const run = async (scale: number): Promise<string> => {
  const dir = mkdtempSync(join(tmpdir(), "arbor-bench-http-"))
  const children: Array<ChildProcess> = []
  try {
    const { base, child, org, token } = await startArbor(join(dir, ".arbor"))
    children.push(child)
    const auth = { authorization: `Bearer ${token}`, "content-type": "application/json" }
    for (let i = 0; i < 200; i++) {
      await fetch(`${base}/iam/v2beta1/groups/${org}`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify({ name: `g${i}` })
      })
    }
    const getPath = `/iam/v2beta1/groups/${org}`
    const listPath = `/iam/v2beta1/groups?uidp.descendants_of=${org}&page_size=50`
    const bodies = {
      [getPath]: await (await fetch(`${base}${getPath}`, { headers: auth })).text(),
      "/iam/v2beta1/groups": await (await fetch(`${base}${listPath}`, { headers: auth })).text()
    }

    const barePort = await freePort()
    const bare = `http://127.0.0.1:${barePort}`
    children.push(spawn(process.execPath, ["-e", bareServer], {
      env: { ...process.env, PORT: String(barePort), RESPONSES: JSON.stringify(bodies) },
      stdio: "ignore"
    }))
    await waitReady(`${bare}${getPath}`)
    const floorPort = await freePort()
    const floor = `http://127.0.0.1:${floorPort}`
    children.push(spawn(process.execPath, [fileURLToPath(new URL("./frameworkFloor.js", import.meta.url))], {
      env: { ...process.env, PORT: String(floorPort), ARBOR_FLOOR_PATH: getPath, ARBOR_FLOOR_BODY: bodies[getPath] },
      stdio: "ignore"
    }))
    await waitReady(`${floor}${getPath}`)

    const seconds = Math.max(3, Math.round(10 * Math.min(scale, 1)))
    const rounds = 3
    const measure = async (path: string, framework?: string) => {
      const ours: Array<Load> = []
      const floor: Array<Load> = []
      const frameworkFloor: Array<Load> = []
      await load(`${base}${path}`, token, 2)
      await load(`${bare}${path}`, token, 2)
      if (framework !== undefined) await load(`${framework}${path}`, token, 2)
      for (let r = 0; r < rounds; r++) {
        floor.push(await load(`${bare}${path}`, token, seconds))
        if (framework !== undefined) frameworkFloor.push(await load(`${framework}${path}`, token, seconds))
        ours.push(await load(`${base}${path}`, token, seconds))
      }
      return {
        ours: median(ours.map((l) => l.rps)),
        bare: median(floor.map((l) => l.rps)),
        framework: frameworkFloor.length === 0 ? Number.NaN : median(frameworkFloor.map((l) => l.rps)),
        p99: median(ours.map((l) => l.p99)),
        bareP99: median(floor.map((l) => l.p99))
      }
    }
    const get = await measure(getPath, floor)
    const list = await measure(listPath)
    console.log(
      `GET: ours ${get.ours.toFixed(0)} req/s (p99 ${get.p99} ms), bare ${get.bare.toFixed(0)} req/s; ratio ${
        (get.ours / get.bare).toFixed(3)
      }`
    )
    console.log(
      `list: ours ${list.ours.toFixed(0)} req/s (p99 ${list.p99} ms), bare ${list.bare.toFixed(0)} req/s; ratio ${
        (list.ours / list.bare).toFixed(3)
      }`
    )

    // The harness's table compares time per request: its inverse here.
    const perRequest = (rps: number) => 1000 / rps
    const comparisons: Array<Comparison> = [
      {
        name: "authenticated GET of a group (ms of server time per request)",
        ours: perRequest(get.ours),
        baseline: perRequest(get.bare),
        baselineName: "bare node:http"
      },
      {
        name: "authenticated GET of a group, beside the framework's floor",
        ours: perRequest(get.ours),
        baseline: perRequest(get.framework),
        baselineName: "HttpApi with that one route"
      },
      {
        name: "authenticated 50-item list page with totalCount",
        ours: perRequest(list.ours),
        baseline: perRequest(list.bare),
        baselineName: "bare node:http"
      }
    ]
    const figures: Array<Figure> = [
      {
        name: "GET: requests per second, ours / bare",
        value: `${get.ours.toFixed(0)} / ${get.bare.toFixed(0)} = ${(get.ours / get.bare).toFixed(3)}`,
        target: "≥ 0.1",
        met: get.ours / get.bare >= 0.1
      },
      {
        name: "GET: requests per second, the framework's floor / bare",
        value: `${get.framework.toFixed(0)} / ${get.bare.toFixed(0)} = ${(get.framework / get.bare).toFixed(3)}`
      },
      {
        name: "list: requests per second, ours / bare",
        value: `${list.ours.toFixed(0)} / ${list.bare.toFixed(0)} = ${(list.ours / list.bare).toFixed(3)}`,
        target: "≥ 0.05",
        met: list.ours / list.bare >= 0.05
      },
      {
        name: "GET: p99 latency, ours / bare",
        value: `${get.p99} ms / ${get.bareP99} ms`,
        target: "< 25 ms",
        met: get.p99 < 25
      },
      { name: "list: p99 latency, ours / bare", value: `${list.p99} ms / ${list.bareP99} ms` }
    ]
    return section(
      "HTTP server on SQLite",
      [
        "Our server (`node packages/http/dist/main.js`, SQLite, bearer token verified and authorization decided per",
        "request) and a bare `node:http` server answering the same bytes from memory, each in its own process; for the",
        "GET also an `HttpApi` server of the same framework with that one route answering those bytes; autocannon",
        `with 50 connections, ${rounds} alternating rounds of ${seconds} s, medians. The organization holds 200 groups.`
      ],
      comparisons,
      figures
    )
  } finally {
    for (const child of children) child.kill("SIGTERM")
    rmSync(dir, { recursive: true, force: true })
  }
}
