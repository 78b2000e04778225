/**
 * The authorization code flow of a person's sign-in: begun with a transaction kept in the store (so any server may
 * take the callback) and the provider's address to send the browser to; completed once, at the callback, by the
 * transaction the browser's cookie names.
 */
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { createHash, timingSafeEqual } from "node:crypto"
import { FailedPrecondition, InvalidArgument, PermissionDenied, PreconditionViolation } from "../../../engine/Errors.js"
import { unexpectedConflict } from "../../../engine/internal/operations.js"
import * as Repository from "../../../engine/Repository.js"
import { Store } from "../../../engine/Store.js"
import * as Uid from "../../../engine/Uid.js"
import * as SignIn from "../../SignIn.js"
import type * as Providers from "./providers.js"
import type * as Records from "./records.js"
import { Transaction } from "./records.js"
import type * as RelyingParty from "./relyingParty.js"
import { secrets } from "./relyingParty.js"

/** Equal strings, compared in constant time. */
const same = (a: string, b: string) =>
  timingSafeEqual(createHash("sha256").update(a).digest(), createHash("sha256").update(b).digest())

/** What starting a sign-in records. */
export interface Start {
  readonly provider?: string | undefined
  readonly audience: string
  readonly callback: string | null
  readonly invite?: string | undefined
  readonly refresh?: boolean | undefined
  readonly device: string | null
  /** Handed back to the client beside its tokens. */
  readonly state?: string | undefined
}

/** The callback as the browser brings it: its cookie's transaction, and the provider's parameters. */
export interface Arrival extends RelyingParty.Callback {
  readonly transaction?: string | undefined
}

export const make = (options: {
  readonly records: Effect.Effect.Success<typeof Records.make>
  readonly providers: Effect.Effect.Success<typeof Providers.make>
  readonly relyingParty: Effect.Effect.Success<typeof RelyingParty.make>
  readonly redirectUri: string
}) =>
  Effect.gen(function*() {
    const store = yield* Store
    const stored = Repository.orInternal
    const { providers, records, redirectUri, relyingParty } = options
    const { transactions } = records

    /** Starts a sign-in: a transaction kept for its callback, and the provider's address for the browser. */
    const begin = (start: Start) =>
      Effect.gen(function*() {
        const provider = yield* providers.resolve(start.provider)
        const values = secrets()
        const location = yield* relyingParty.authorizationUrl(provider, values, redirectUri)
        const now = (yield* DateTime.now).epochMillis
        const transaction = Uid.makeRoot()
        yield* stored(store.transaction(Effect.zipRight(
          records.sweep(now),
          unexpectedConflict(transactions.insert(
            new Transaction({
              uid: transaction,
              ...values,
              provider: provider.id,
              callback: start.callback,
              audience: start.audience,
              invite: start.invite ?? null,
              refresh: start.refresh === true,
              device: start.device,
              expireTime: now + Duration.toMillis(SignIn.transactionLifetime),
              createTime: now,
              clientState: start.state ?? null
            })
          ))
        )))
        return { transaction, location }
      })

    /** Takes a transaction out of the store: it is used once, whatever happens next. */
    const take = (uid: string) =>
      stored(store.transaction(Effect.gen(function*() {
        const found = yield* transactions.get(uid)
        if (Option.isSome(found)) yield* transactions.delete({ ranges: [Uid.only(uid)] })
        return Option.getOrUndefined(found)
      })))

    /**
     * The transaction the callback belongs to, taken (it is used once), once its `state` matched; undefined when
     * there is none, as an attacker's callback has none.
     */
    const arrive = (arrival: Arrival) =>
      Effect.gen(function*() {
        if (arrival.transaction === undefined || arrival.transaction === "") {
          return yield* InvalidArgument.field(
            "state",
            "belongs to no sign-in started in this browser (its cookie is missing)"
          )
        }
        const transaction = yield* take(arrival.transaction)
        if (transaction === undefined || !same(arrival.state ?? "", transaction.state)) {
          return yield* InvalidArgument.field("state", "belongs to no sign-in in progress in this browser")
        }
        return transaction
      })

    /** The person's claims, from the callback of `transaction`'s sign-in. */
    const redeem = (transaction: Transaction, arrival: Arrival) =>
      Effect.gen(function*() {
        if (transaction.expireTime <= (yield* DateTime.now).epochMillis) {
          const summary = "the sign-in took longer than 10 minutes; start again"
          return yield* new FailedPrecondition({
            summary,
            violations: [new PreconditionViolation({ type: "SIGN_IN_EXPIRED", subject: "", description: summary })]
          })
        }
        if (arrival.error !== undefined) {
          return yield* new PermissionDenied({
            capability: "sign_in",
            resource: "provider",
            reason: "PROVIDER_REFUSED",
            logDetail: arrival.error
          })
        }
        if (arrival.code === undefined || arrival.code === "") {
          return yield* InvalidArgument.field("code", "is required")
        }
        const provider = yield* providers.resolve(transaction.provider || undefined)
        const { transaction: _, ...callback } = arrival
        const claims = yield* relyingParty.redeem(provider, callback, transaction, redirectUri)
        return { provider, claims }
      })

    return { begin, arrive, redeem }
  })
