/**
 * Fuzzing the running server with thousands of malformed requests: random paths, parameters, bodies and headers,
 * each wrong in at least one way. No response is a 5xx, every error has the google.rpc.Status shape, and the data
 * is the same afterwards.
 */
import { Advisories, Principal, Repos, Store, Tags } from "@arbor/core"
import type { HttpClient } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Runtime from "effect/Runtime"
import { call, junk, member, testServer } from "./support.js"

const prefixes = [
  "/iam/v2beta1/groups",
  "/iam/v2beta1/identities",
  "/iam/v2beta1/roles",
  "/iam/v2beta1/roleBindings",
  "/iam/v2beta1/identityProviders",
  "/iam/v2beta1/accountAssociations",
  "/iam/v2beta1/groupInvites",
  "/registry/v2beta1/repos",
  "/registry/v2beta1/tags",
  "/vulnerabilities/v2beta1/advisories",
  "/iam/v1/groups",
  "/iam/v1/rolebindings",
  "/registry/v1/repos",
  "/registry/v1/tags",
  "/iam/v3/groups",
  "/",
  "/openapi.json/x",
  "/healthz/x"
]

const tables = [
  "groups",
  "identities",
  "roles",
  "role_bindings",
  "identity_providers",
  "account_associations",
  "group_invites",
  "repos",
  "tags",
  "advisories"
]

/** Every row of every table, for comparing before and after. */
const snapshot = Effect.gen(function*() {
  const store = yield* Store.Store
  const out: Record<string, unknown> = {}
  for (const name of tables) {
    out[name] = yield* store.find({ name, columns: {}, unique: [], indexes: [] }, {
      order: [{ column: "uid", direction: "asc" }]
    })
  }
  return JSON.stringify(out)
})

const isJson = (text: string) => {
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}

describe("fuzzing", () => {
  it.scopedLive(
    "thousands of malformed requests: no 5xx, every error shaped, no data changed",
    () =>
      Effect.gen(function*() {
        const owner = yield* member("acme")
        const viewer = yield* member("acme", "viewer")
        const team =
          (yield* call("POST", `/iam/v2beta1/groups/${owner.org}`, { token: owner.token, body: { name: "team" } })).body
        yield* (yield* Repos.Repos).upsert(Principal.system, team.uid, { name: "app" }).pipe(
          Effect.flatMap((repo) =>
            Effect.flatMap(Tags.Tags, (tags) => tags.upsert(Principal.system, repo.uid, { name: "v1" }))
          )
        )
        yield* (yield* Advisories.Advisories).importDocuments(Principal.system, owner.org, [])
        const uids = [owner.org, team.uid, owner.identity, `${owner.org}/0123456789abcdef`]
        const before = yield* snapshot

        const request = FastCheck.record({
          method: FastCheck.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE"),
          prefix: FastCheck.constantFrom(...prefixes),
          segment: FastCheck.oneof(FastCheck.constantFrom(...uids), junk, FastCheck.constant("")),
          query: FastCheck.array(
            FastCheck.tuple(
              FastCheck.constantFrom(
                "page_size",
                "pageSize",
                "skip",
                "page_token",
                "order_by",
                "uidp.descendants_of",
                "uidp.ids",
                "uidp.in_root",
                "name",
                "updateMask",
                "updated_since",
                "event_types",
                "x"
              ),
              junk
            ),
            { maxLength: 4 }
          ),
          body: FastCheck.oneof(
            FastCheck.constant(undefined),
            FastCheck.json().map((j) => ({ raw: j })),
            FastCheck.string({ maxLength: 200 }).map((s) => ({ raw: s })),
            FastCheck.constantFrom({ raw: "{" }, { raw: "{\"name\": 5}" }, { raw: "[1,2" }, {
              raw: "x".repeat(1024 * 1024 + 10)
            }),
            FastCheck.dictionary(
              FastCheck.constantFrom(
                "name",
                "description",
                "claimMatch",
                "capabilities",
                "identityUid",
                "roleUid",
                "oidc",
                "ttl"
              ),
              FastCheck.anything()
            ).map((o) => ({ value: o }))
          ),
          contentType: FastCheck.constantFrom(
            "application/json",
            "text/plain",
            "application/x-www-form-urlencoded",
            "",
            "application/json; charset=utf-8"
          ),
          auth: FastCheck.constantFrom("owner", "viewer", "none", "garbage", "basic", "expired-looking")
        }).filter((r) => {
          // Only requests that cannot succeed at changing data: a write by the owner to a resource that exists
          // must carry a body the server refuses before reading it (wrong type, too large) or cannot parse, and
          // deletes (which read no body) are left out.
          const write = r.method !== "GET" && r.method !== "HEAD" && r.method !== "OPTIONS"
          if (!write || r.auth !== "owner" || !uids.slice(0, 3).includes(r.segment as string)) return true
          if (r.body === undefined || r.method === "DELETE") return false
          const raw = "raw" in r.body ? r.body.raw : undefined
          const refusedUnread = !r.contentType.startsWith("application/json") || (raw?.length ?? 0) > 1024 * 1024
          const unparsable = raw !== undefined && !isJson(raw)
          return refusedUnread || unparsable
        })

        const runtime = yield* Effect.runtime<HttpClient.HttpClient>()
        let sent = 0
        const statuses = new Map<number, number>()
        yield* Effect.promise(() =>
          FastCheck.assert(
            FastCheck.asyncProperty(request, async (r) => {
              const headers: Record<string, string> = {}
              if (r.auth === "garbage") headers.authorization = "Bearer not.a.token"
              if (r.auth === "basic") headers.authorization = "Basic dXNlcjpwYXNz"
              if (r.auth === "expired-looking") {
                headers.authorization = `Bearer ${owner.token.split(".").slice(0, 2).join(".")}.AAAA`
              }
              const token = r.auth === "owner" ? owner.token : r.auth === "viewer" ? viewer.token : undefined
              const query = r.query.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v as string)}`).join(
                "&"
              )
              const segment = (r.segment as string) === ""
                ? ""
                : `/${encodeURI(r.segment as string).replace(/[?#]/g, encodeURIComponent)}`
              const path = `${r.prefix === "/" ? "" : r.prefix}${segment}${query === "" ? "" : `?${query}`}` || "/"
              const raw = r.body === undefined ? undefined : "raw" in r.body ? r.body.raw : JSON.stringify(r.body.value)
              const reply = await Runtime.runPromise(runtime)(
                call(r.method, path, {
                  ...(token === undefined ? {} : { token }),
                  ...(raw === undefined
                    ? {}
                    : { raw, contentType: r.contentType === "" ? "application/octet-stream" : r.contentType }),
                  headers
                })
              ).catch((e) => assert.fail(`${r.method} ${path}: no answer, the connection broke (${String(e)})`))
              sent++
              statuses.set(reply.status, (statuses.get(reply.status) ?? 0) + 1)
              assert.isBelow(reply.status, 500, `${r.method} ${path}: ${reply.text.slice(0, 300)}`)
              if (reply.status >= 400 && r.method !== "HEAD") {
                assert.isNumber(reply.body?.code, `${r.method} ${path}: ${reply.text.slice(0, 300)}`)
                assert.isString(reply.body.message)
                assert.strictEqual(reply.body.details[0]["@type"], "type.googleapis.com/google.rpc.ErrorInfo")
              }
            }),
            { numRuns: 2500 }
          )
        )
        assert.isAtLeast(sent, 2500)
        assert.strictEqual(yield* snapshot, before, "no data changed")
        assert.isAtLeast(statuses.size, 4, JSON.stringify([...statuses]))
      }).pipe(Effect.provide(testServer())),
    { timeout: 300_000 }
  )
})
