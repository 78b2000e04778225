import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Egress from "../src/engine/internal/egress.js"
import { Arbor, AuditTrail, Principal, Settings, Subscriptions } from "../src/index.js"
import * as Refusal from "../src/testing/Refusal.js"
import { folder, organization, principalWith } from "./fixtures.js"

/** Names under `.invalid` resolve as the test says; nothing else resolves. */
const resolver = Layer.succeed(Egress.Resolver, async (host: string) => {
  const table: Record<string, string> = {
    "hooks.example.invalid": "93.184.216.34",
    "intranet.example.invalid": "10.0.0.7",
    "metadata.example.invalid": "169.254.169.254"
  }
  const address = table[host] ?? (/^[\d.]+$/.test(host) ? host : undefined)
  if (address === undefined) throw new Error(`ENOTFOUND ${host}`)
  return [{ address, family: 4 }]
})

const engine = (allowLoopbackSinks: boolean) =>
  Arbor.layerMemory.pipe(
    Layer.provide(resolver),
    Layer.provide(
      Layer.succeed(Settings.Settings, { allowLoopbackHttpIssuers: false, platformAdmins: [], allowLoopbackSinks })
    )
  )

describe("Subscriptions", () => {
  it.effect("create, get, list by visibility, delete (twice); each write in the change log", () =>
    Effect.gen(function*() {
      const subscriptions = yield* Subscriptions.Subscriptions
      const org = yield* organization("acme")
      const team = yield* folder(org.uid, "team")
      const other = yield* folder(org.uid, "other")
      const ownerOfTeam = yield* principalWith(org.uid, "owner", "owner", [team.uid])
      const created = yield* subscriptions.create(ownerOfTeam, team.uid, {
        sink: "https://hooks.example.invalid/arbor"
      })
      assert.strictEqual(created.sink, "https://hooks.example.invalid/arbor")
      assert.isTrue(created.uid.startsWith(`${team.uid}/`))
      assert.strictEqual(created.createdBy, ownerOfTeam.identityUid)
      // Read back with its health: nothing delivered yet, nothing waiting.
      const got = yield* subscriptions.get(ownerOfTeam, created.uid)
      assert.deepStrictEqual({ ...got, health: undefined }, { ...created, health: undefined })
      assert.deepStrictEqual({ ...got.health }, { state: "ACTIVE", pending: 0 })
      yield* subscriptions.create(Principal.system, other.uid, { sink: "https://hooks.example.invalid/other" })
      assert.deepStrictEqual((yield* subscriptions.list(ownerOfTeam)).items.map((s) => s.uid), [created.uid])
      const denied = yield* Refusal.of(
        subscriptions.create(ownerOfTeam, other.uid, { sink: "https://hooks.example.invalid/x" })
      )
      assert.strictEqual(denied._tag, "PermissionDenied")
      yield* subscriptions.delete(ownerOfTeam, created.uid)
      yield* subscriptions.delete(ownerOfTeam, created.uid)
      const types = (yield* (yield* AuditTrail.AuditTrail).list(Principal.system, { subject: created.uid })).items
        .map((e) => e.type)
      assert.deepStrictEqual(types, [
        "dev.chainguard.api.events.subscription.created.v1",
        "dev.chainguard.api.events.subscription.deleted.v1"
      ])
    }).pipe(Effect.provide(engine(false))))

  it.effect("refuses sinks that are not https on a public address, naming the field and why", () =>
    Effect.gen(function*() {
      const subscriptions = yield* Subscriptions.Subscriptions
      const org = yield* organization("acme")
      const refusal = (sink: unknown) =>
        Effect.map(
          Refusal.of(subscriptions.create(Principal.system, org.uid, sink === undefined ? {} : { sink })),
          (e) => e._tag === "InvalidArgument" ? `${e.violations[0].field}: ${e.violations[0].description}` : e._tag
        )
      assert.match(yield* refusal("http://hooks.example.invalid/x"), /^sink: must be an https:\/\/ URL/)
      assert.match(
        yield* refusal("https://intranet.example.invalid/x"),
        /^sink: its host resolves to 10\.0\.0\.7, which is not a public/
      )
      assert.match(yield* refusal("https://metadata.example.invalid/x"), /not a public address/)
      assert.match(yield* refusal("https://10.1.2.3/x"), /^sink: must be on a public address/)
      assert.match(yield* refusal("http://127.0.0.1:9/x"), /^sink: must be an https:\/\/ URL/)
      assert.match(yield* refusal("https://nowhere.invalid/x"), /^sink: its host does not resolve/)
      assert.match(yield* refusal("https://user:pw@hooks.example.invalid/x"), /user name or password/)
      assert.match(yield* refusal(42), /^sink: must be a string/)
      assert.match(yield* refusal(undefined), /^sink: must be an https:\/\/ URL/)
      assert.strictEqual((yield* subscriptions.list(Principal.system)).totalCount, 0, "nothing was written")
    }).pipe(Effect.provide(engine(false))))

  it.effect("loopback sinks, over http too, only where the settings allow them", () =>
    Effect.gen(function*() {
      const subscriptions = yield* Subscriptions.Subscriptions
      const org = yield* organization("acme")
      const local = yield* subscriptions.create(Principal.system, org.uid, { sink: "http://127.0.0.1:8123/hook" })
      assert.strictEqual(local.sink, "http://127.0.0.1:8123/hook")
      const intranet = yield* Refusal.of(
        subscriptions.create(Principal.system, org.uid, { sink: "https://intranet.example.invalid/x" })
      )
      assert.strictEqual(intranet._tag, "InvalidArgument")
    }).pipe(Effect.provide(engine(true))))
})
