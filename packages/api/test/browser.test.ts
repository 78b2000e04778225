/**
 * The contract loads where a browser loads it: bundled for the browser (so no `node:` module can be imported) and
 * run in a context that has the browser's globals and none of Node's (no `Buffer`, `process` or `require`), where
 * it decodes a resource and derives a client whose failures are the engine's typed errors.
 */
import { assert, describe, it } from "@effect/vitest"
import * as esbuild from "esbuild"
import { fileURLToPath } from "node:url"
import * as vm from "node:vm"
import { sourceOf } from "../../launcher/sources.mjs"

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url))

/** Resolves the workspace's own packages to their sources, as the tests do. */
const workspaceSources: esbuild.Plugin = {
  name: "workspace-sources",
  setup(build) {
    build.onResolve({ filter: /^@arbor\/[a-z-]+(\/.*)?$/ }, ({ path }) => ({ path: sourceOf(path) }))
  }
}

const program = `
import { Api, ErrorBody, Wire } from "@arbor/api"
import { PermissionDenied } from "@arbor/core/Errors"
import { HttpApiClient, HttpClient, HttpClientResponse } from "@effect/platform"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

const org = "a".repeat(40)
const group = Schema.decodeUnknownSync(Wire.Group.v2)({
  uid: org, name: "acme", description: "", resourceLimits: {}, verified: false,
  createTime: "2026-11-22T10:00:00.000Z", updateTime: "2026-11-22T10:00:00.000Z"
})
const body = ErrorBody.render(new PermissionDenied({ capability: "groups.list", resource: org }), "arbor").body
const server = HttpClient.make((request) =>
  Effect.succeed(HttpClientResponse.fromWeb(request, new Response(JSON.stringify(body), {
    status: 403, headers: { "content-type": "application/json" }
  }))))
globalThis.outcome = Effect.runPromise(Effect.gen(function*() {
  const client = yield* HttpApiClient.makeWith(Api.Api, { httpClient: server, baseUrl: "http://api.invalid" })
  const failure = yield* Effect.flip(client.groups.get({ path: { uid: org } }))
  return { name: group.name, year: group.createTime.pipe((t) => new Date(t.epochMillis).getUTCFullYear()),
    failure: failure._tag, capability: failure.capability }
}))
`

describe("the contract in a browser", () => {
  it("bundles for the browser and runs without Node's globals", async () => {
    const bundle = await esbuild.build({
      stdin: { contents: program, resolveDir: here("."), sourcefile: "program.ts", loader: "ts" },
      bundle: true,
      platform: "browser",
      format: "iife",
      write: false,
      logLevel: "silent",
      plugins: [workspaceSources]
    })
    const code = bundle.outputFiles[0]!.text
    assert.notMatch(code, /require\("node:/)
    const browser = {
      crypto: globalThis.crypto,
      TextEncoder,
      TextDecoder,
      URL,
      URLSearchParams,
      Request,
      Response,
      FormData,
      Blob,
      ReadableStream,
      Headers,
      AbortController,
      setTimeout,
      clearTimeout,
      queueMicrotask,
      console
    }
    const context = vm.createContext({ ...browser })
    vm.runInContext(code, context)
    assert.isUndefined(vm.runInContext("typeof Buffer === 'undefined' ? undefined : 'Buffer'", context))
    const outcome = await context.outcome
    assert.deepStrictEqual({ ...outcome }, {
      name: "acme",
      year: 2026,
      failure: "PermissionDenied",
      capability: "groups.list"
    })
  })
})
