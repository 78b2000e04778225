/**
 * The rows sign-ins keep, each with its schema, read and written through `Repository` as every resource is: a
 * sign-in waiting for its provider's callback, and a device authorization waiting for its person.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Repository from "../../../engine/Repository.js"
import { Uid } from "../../../engine/Uid.js"
import * as SignIn from "../../SignIn.js"

const Millis = Schema.Number

/** A sign-in between its start and its callback: the browser's cookie names its uid. */
export class Transaction extends Schema.Class<Transaction>("@arbor/core/SignIn/Transaction")({
  uid: Uid,
  /** Sent to the provider; it comes back with the callback. */
  state: Schema.String,
  /** Sent to the provider; its ID token must carry it. */
  nonce: Schema.String,
  /** The PKCE verifier of the code's challenge. */
  verifier: Schema.String,
  /** The organization's identity provider's uid; empty for the server's own. */
  provider: Schema.String,
  /** The loopback address to return to (browser flow); null for a device's sign-in. */
  callback: Schema.NullOr(Schema.String),
  audience: Schema.String,
  invite: Schema.NullOr(Schema.String),
  refresh: Schema.Boolean,
  /** The device authorization this sign-in approves (headless flow). */
  device: Schema.NullOr(Schema.String),
  expireTime: Millis,
  createTime: Millis,
  /** What the client asked to have back beside its tokens (`SignInRequest.state`). */
  clientState: Schema.NullOr(Schema.String)
}) {}

/** A device authorization: its client holds the device code (kept as a hash), its person types the user code. */
export class Device extends Schema.Class<Device>("@arbor/core/SignIn/Device")({
  uid: Uid,
  deviceCodeHash: Schema.String,
  /** Folded: eight letters of `SignIn.userCodeAlphabet`. */
  userCode: Schema.String,
  provider: Schema.String,
  audience: Schema.String,
  invite: Schema.NullOr(Schema.String),
  refresh: Schema.Boolean,
  status: Schema.Literal("pending", "approved", "denied"),
  /** The person who approved it. */
  identity: Schema.NullOr(Schema.String),
  /** The group mappings their sign-in gave (docs/api.md §13), for the API token the poll hands out. */
  mappings: Schema.optionalWith(Schema.NullOr(Schema.Array(Uid)), { default: () => null }),
  /** Seconds the client must wait between polls. */
  interval: Schema.Number,
  lastPollTime: Schema.NullOr(Millis),
  expireTime: Millis,
  createTime: Millis,
  updateTime: Millis
}) {}

export const tables = { transactions: SignIn.transactionsTable, devices: SignIn.devicesTable } as const

/** The repositories of both, and the sweep of expired ones. */
export const make = Effect.gen(function*() {
  const transactions = yield* Repository.make(tables.transactions, Transaction)
  const devices = yield* Repository.make(tables.devices, Device)

  /** Drops sign-ins in progress that have expired (a few at a time, whenever a new one starts). */
  const sweep = (now: number) =>
    Effect.forEach([transactions, devices], (repository) =>
      Effect.gen(function*() {
        const oldest = yield* repository.findRows({
          order: [{ column: "expireTime", direction: "asc" }, { column: "uid", direction: "asc" }],
          limit: 20
        })
        const expired = oldest.filter((row) => typeof row.expireTime === "number" && row.expireTime <= now)
        if (expired.length > 0) {
          yield* repository.delete({
            conditions: [{ _tag: "In", column: "uid", values: expired.map((row) => row.uid) }]
          })
        }
      }), { discard: true })

  return { transactions, devices, sweep }
})
