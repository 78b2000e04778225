/**
 * Fuzzing every route the server declares (its OpenAPI document, read from the running server: custom methods,
 * decisions, subscriptions, the audit trail, elevations, v1, the token endpoints), not only the resources' standard
 * ones (`fuzz.test.ts`): each route's own parameters and body fields with values of every kind, by callers of every
 * standing. Some requests succeed and change data; none is answered 5xx, and every error has the google.rpc.Status
 * shape (the OAuth endpoints' their own, RFC 6749 §5.2; the sign-in's pages are HTML for a person). And, route by
 * route, what holds of all: a parameter a route does not take is refused by name (DECISIONS §18), and no body, however
 * shaped, is a 5xx.
 */
import type { HttpClient } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Runtime from "effect/Runtime"
import { call, junk, member, testServer } from "./support.js"

interface Operation {
  readonly parameters?: ReadonlyArray<{ readonly name: string; readonly in: string }>
  readonly requestBody?: { readonly content?: Record<string, { readonly schema?: Schema }> }
}
interface Schema {
  readonly $ref?: string
  readonly properties?: Record<string, unknown>
}

/** A route of the document: its method, path template, query parameters and body fields. */
interface Route {
  readonly method: string
  readonly path: string
  readonly query: ReadonlyArray<string>
  readonly fields: ReadonlyArray<string>
  readonly form: boolean
  /** Whether it takes a body. */
  readonly body: boolean
}

const methods = ["get", "post", "put", "patch", "delete"] as const

/** The routes of an OpenAPI document, but the watch (a stream that stays open while it may). */
const routesOf = (doc: {
  readonly paths: Record<string, Partial<Record<string, Operation>>>
  readonly components?: { readonly schemas?: Record<string, Schema> }
}): Array<Route> =>
  Object.entries(doc.paths).flatMap(([path, item]) =>
    methods.flatMap((method) => {
      const operation = item[method]
      if (operation === undefined || path.endsWith(":watch")) return []
      const content = operation.requestBody?.content ?? {}
      const schema = Object.values(content)[0]?.schema
      const resolved = schema?.$ref === undefined ? schema : doc.components?.schemas?.[schema.$ref.split("/").at(-1)!]
      return [{
        method: method.toUpperCase(),
        path,
        query: (operation.parameters ?? []).filter((p) => p.in === "query").map((p) => p.name),
        fields: Object.keys(resolved?.properties ?? {}),
        form: "application/x-www-form-urlencoded" in content,
        body: operation.requestBody !== undefined
      }]
    })
  )

/** `route`'s path with `uid` where it takes one (a custom method of a collection takes it before its verb). */
const pathOf = (route: Route, uid: string) => {
  const templated = route.path.replace(/\{[^}]+\}/g, uid)
  return templated === route.path && /:[a-zA-Z]+$/.test(templated) && uid !== ""
    ? templated.replace(/:([a-zA-Z]+)$/, `/${uid}:$1`)
    : templated
}

describe("fuzzing every declared route", () => {
  it.scopedLive("every route refuses a query parameter it does not take, naming it; OAuth's endpoints ignore one", () =>
    Effect.gen(function*() {
      const owner = yield* member("acme")
      const routes = routesOf((yield* call("GET", "/openapi.json")).body)
      const taken: Array<string> = []
      for (const route of routes.filter((r) => !r.path.startsWith("/oauth"))) {
        const reply = yield* call(route.method, `${pathOf(route, owner.org)}?not_a_parameter=1`, {
          token: owner.token,
          ...(route.body ? { raw: "{}" } : {})
        })
        const field = reply.body?.details?.[1]?.fieldViolations?.[0]?.field
        if (reply.status !== 400 || field !== "not_a_parameter") {
          taken.push(`${route.method} ${route.path}: ${reply.status}`)
        }
      }
      assert.deepStrictEqual(taken, [])
      // RFC 6749 §3.1, §3.2: an authorization server ignores a parameter it does not know.
      const asked = (query: string) =>
        call("POST", `/oauth/token${query}`, {
          raw: "grant_type=urn%3Aexample%3Anone&not_a_parameter=1",
          contentType: "application/x-www-form-urlencoded"
        })
      const [plain, unknown] = [yield* asked(""), yield* asked("?not_a_parameter=1")]
      assert.strictEqual(plain.body.error, "unsupported_grant_type", plain.text)
      assert.deepStrictEqual([unknown.status, unknown.body], [plain.status, plain.body])
    }).pipe(Effect.provide(testServer())))

  it.scopedLive("every answer is nosniff, and every JSON one no-store unless it says otherwise (tokens, codes, secrets)", () =>
    Effect.gen(function*() {
      const owner = yield* member("acme")
      const routes = routesOf((yield* call("GET", "/openapi.json")).body)
      const wrong: Array<string> = []
      for (const route of routes) {
        const reply = yield* call(route.method, pathOf(route, owner.org), {
          token: owner.token,
          ...(route.body ? { raw: "{}" } : {})
        })
        const type = reply.headers["content-type"] ?? ""
        if (reply.headers["x-content-type-options"] !== "nosniff") {
          wrong.push(`${route.method} ${route.path}: sniffable`)
        }
        if (type.includes("json") && reply.headers["cache-control"] !== "no-store") {
          wrong.push(
            `${route.method} ${route.path}: ${reply.status} ${type} cached as ${reply.headers["cache-control"]}`
          )
        }
      }
      assert.deepStrictEqual(wrong, [])
      // A page keeps its own: the console's is revalidated, not refused to caches.
      const console = yield* call("GET", "/console/")
      assert.deepStrictEqual(
        [console.headers["cache-control"], console.headers["x-content-type-options"]],
        ["no-cache", "nosniff"]
      )
    }).pipe(Effect.provide(testServer())))

  it.scopedLive("every route that takes a body, sent none, null, an array, a number or a string: never 5xx", () =>
    Effect.gen(function*() {
      const owner = yield* member("acme")
      const routes = routesOf((yield* call("GET", "/openapi.json")).body).filter((route) => route.body)
      assert.isAtLeast(routes.length, 30)
      const failed: Array<string> = []
      for (const route of routes) {
        for (const raw of [undefined, "null", "[]", "5", "\"x\""]) {
          const reply = yield* call(route.method, pathOf(route, owner.org), {
            token: owner.token,
            ...(raw === undefined ? {} : { raw })
          })
          if (reply.status >= 500) {
            failed.push(`${route.method} ${route.path} ${raw ?? "(none)"}: ${reply.text.slice(0, 120)}`)
          }
        }
      }
      assert.deepStrictEqual(failed, [])
    }).pipe(Effect.provide(testServer())))

  it.scopedLive(
    "each route's own parameters and fields, valid and not, by owner, viewer, stranger and no one: no 5xx, errors shaped",
    () =>
      Effect.gen(function*() {
        const owner = yield* member("acme")
        const viewer = yield* member("acme", "viewer")
        const stranger = yield* member("elsewhere")
        const team =
          (yield* call("POST", `/iam/v2beta1/groups/${owner.org}`, { token: owner.token, body: { name: "team" } })).body
        const uids = [owner.org, team.uid, owner.identity, stranger.org, `${owner.org}/0123456789abcdef`]
        const routes = routesOf((yield* call("GET", "/openapi.json")).body)
        assert.isAtLeast(routes.length, 100)

        const value = FastCheck.oneof(
          junk,
          FastCheck.constantFrom(...uids),
          FastCheck.integer(),
          FastCheck.boolean(),
          FastCheck.constant(null),
          FastCheck.array(FastCheck.oneof(junk, FastCheck.constantFrom(...uids)), { maxLength: 3 }),
          FastCheck.dictionary(FastCheck.string({ maxLength: 8 }), FastCheck.oneof(junk, FastCheck.integer()), {
            maxKeys: 3
          })
        )
        const request = FastCheck.constantFrom(...routes).chain((route) =>
          FastCheck.record({
            route: FastCheck.constant(route),
            method: FastCheck.oneof(
              { weight: 9, arbitrary: FastCheck.constant(route.method) },
              { weight: 1, arbitrary: FastCheck.constantFrom("GET", "POST", "PATCH", "DELETE", "PUT") }
            ),
            // A uid in the path, where the template has one or where a custom method follows a collection.
            segment: FastCheck.oneof(FastCheck.constantFrom(...uids), junk),
            query: FastCheck.array(
              FastCheck.tuple(
                FastCheck.constantFrom(...route.query, "x"),
                FastCheck.oneof(junk, FastCheck.constantFrom(...uids))
              ),
              { maxLength: 4 }
            ),
            body: FastCheck.oneof(
              FastCheck.constant(undefined),
              FastCheck.dictionary(FastCheck.constantFrom(...route.fields, "x"), value, { maxKeys: 5 }),
              FastCheck.json().map((raw) => ({ raw })),
              FastCheck.constantFrom({ raw: "{" }, { raw: "[1," }, { raw: "" })
            ),
            auth: FastCheck.constantFrom("owner", "viewer", "stranger", "none", "garbage")
          })
        )

        const runtime = yield* Effect.runtime<HttpClient.HttpClient>()
        const reached = new Set<string>()
        const statuses = new Map<number, number>()
        yield* Effect.promise(() =>
          FastCheck.assert(
            FastCheck.asyncProperty(request, async (r) => {
              const path = pathOf(r.route, encodeURI(r.segment).replace(/[?#]/g, encodeURIComponent))
              const query = r.query.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
                .join("&")
              const url = `${path}${query === "" ? "" : `?${query}`}`
              const token = { owner: owner.token, viewer: viewer.token, stranger: stranger.token }[
                r.auth as "owner" | "viewer" | "stranger"
              ]
              const headers: Record<string, string> = r.auth === "garbage"
                ? { authorization: "Bearer not.a.token" }
                : {}
              const raw = r.body === undefined
                ? undefined
                : "raw" in r.body
                ? String(r.body.raw)
                : r.route.form
                ? new URLSearchParams(Object.entries(r.body).map(([k, v]): [string, string] => [k, String(v)]))
                  .toString()
                : JSON.stringify(r.body)
              const reply = await Runtime.runPromise(runtime)(
                call(r.method, url, {
                  ...(token === undefined ? {} : { token }),
                  ...(raw === undefined
                    ? {}
                    : { raw, contentType: r.route.form ? "application/x-www-form-urlencoded" : "application/json" }),
                  headers
                })
              ).catch((e) => assert.fail(`${r.method} ${url}: no answer, the connection broke (${String(e)})`))
              reached.add(`${r.route.method} ${r.route.path}`)
              statuses.set(reply.status, (statuses.get(reply.status) ?? 0) + 1)
              assert.isBelow(reply.status, 500, `${r.method} ${url} ${raw ?? ""}: ${reply.text.slice(0, 300)}`)
              if (reply.status >= 400) {
                const body = reply.body as Record<string, any> | undefined
                // The sign-in's pages answer a person, in HTML; the OAuth endpoints, in OAuth's shape.
                if (String(reply.headers["content-type"]).startsWith("text/html")) return
                if (r.route.path.startsWith("/oauth") && typeof body?.error === "string") return
                assert.isNumber(body?.code, `${r.method} ${url}: ${reply.text.slice(0, 300)}`)
                assert.isString(body!.message)
                assert.strictEqual(body!.details[0]["@type"], "type.googleapis.com/google.rpc.ErrorInfo")
              }
            }),
            { numRuns: 2000 }
          )
        )
        assert.isAtLeast(reached.size, routes.length * 0.9, "most routes reached")
        assert.isAtLeast(statuses.size, 5, JSON.stringify([...statuses]))
      }).pipe(Effect.provide(testServer())),
    { timeout: 300_000 }
  )
})
