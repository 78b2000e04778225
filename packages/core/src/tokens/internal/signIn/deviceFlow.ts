/**
 * The device flow (RFC 8628), as this server's own authorization server for headless clients: a device code for the
 * client to poll with, a user code its person types at the verification page, their sign-in through the code flow,
 * and the client's tokens once, at its next poll.
 */
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { createHash } from "node:crypto"
import { FailedPrecondition, NotFound, PreconditionViolation } from "../../../engine/Errors.js"
import { unexpectedConflict } from "../../../engine/internal/operations.js"
import * as Repository from "../../../engine/Repository.js"
import { Store } from "../../../engine/Store.js"
import * as Uid from "../../../engine/Uid.js"
import * as SignIn from "../../SignIn.js"
import type * as Records from "./records.js"
import { Device } from "./records.js"

const hash = (deviceCode: string) => createHash("sha256").update(deviceCode).digest("hex")

const random = (bytes: number) => Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString("base64url")

const newUserCode = () =>
  Array.from(crypto.getRandomValues(new Uint8Array(8)), (b) => SignIn.userCodeAlphabet[b % 20]).join("")

const grantError = (error: SignIn.DeviceGrantError["error"], description: string) =>
  new SignIn.DeviceGrantError({ error, description })

/** Why a device's sign-in cannot change: it was already approved or refused. */
export const alreadyDecided = () => {
  const summary = "this device's sign-in was already approved or refused; start again on it"
  return new FailedPrecondition({
    summary,
    violations: [new PreconditionViolation({ type: "DEVICE_ALREADY_DECIDED", subject: "", description: summary })]
  })
}

/** A decision on a device authorization. */
export type Decision =
  | { readonly status: "approved"; readonly identity: string; readonly mappings: ReadonlyArray<Uid.Uid> | null }
  | { readonly status: "denied" }

export const make = (records: Effect.Effect.Success<typeof Records.make>) =>
  Effect.gen(function*() {
    const store = yield* Store
    const stored = Repository.orInternal
    const { devices } = records

    /**
     * Decides a device authorization, once: a compare-and-set in one transaction, so the first approval or denial
     * stands and a later one (a second person's sign-in through the same code finishing late) changes nothing.
     * False when it was already decided, or is gone.
     */
    const decide = (uid: string, decision: Decision) =>
      stored(store.transaction(Effect.gen(function*() {
        const found = yield* devices.get(uid)
        if (Option.isNone(found) || found.value.status !== "pending") return false
        const updateTime = (yield* DateTime.now).epochMillis
        yield* unexpectedConflict(devices.update(new Device({ ...found.value, ...decision, updateTime })))
        return true
      })))

    /** Starts a device's sign-in: the codes, kept with what the sign-in asked for. */
    const authorize = (request: {
      readonly provider: string
      readonly audience: string
      readonly invite?: string | undefined
      readonly refresh?: boolean | undefined
    }) =>
      Effect.gen(function*() {
        const deviceCode = random(32)
        const now = (yield* DateTime.now).epochMillis
        for (let attempt = 0;; attempt++) {
          const userCode = newUserCode()
          const inserted = yield* stored(store.transaction(Effect.zipRight(
            records.sweep(now),
            devices.insert(
              new Device({
                uid: Uid.makeRoot(),
                deviceCodeHash: hash(deviceCode),
                userCode,
                provider: request.provider,
                audience: request.audience,
                invite: request.invite ?? null,
                refresh: request.refresh === true,
                status: "pending",
                identity: null,
                mappings: null,
                interval: Duration.toSeconds(SignIn.pollInterval),
                lastPollTime: null,
                expireTime: now + Duration.toMillis(SignIn.deviceLifetime),
                createTime: now,
                updateTime: now
              })
            )
          ))).pipe(
            Effect.as(true),
            Effect.catchTag("UniqueViolation", (e) => attempt < 5 ? Effect.succeed(false) : Effect.die(e))
          )
          if (inserted) {
            return {
              deviceCode,
              userCode: SignIn.formatUserCode(userCode),
              expiresIn: Duration.toSeconds(SignIn.deviceLifetime),
              interval: Duration.toSeconds(SignIn.pollInterval)
            }
          }
        }
      })

    /** A device authorization still waiting for its person, by the user code they typed. */
    const pending = (userCode: string) =>
      Effect.gen(function*() {
        const code = SignIn.foldUserCode(userCode)
        const notFound = new NotFound({ resourceType: "device code", uid: SignIn.formatUserCode(code) })
        if (code.length !== 8) return yield* notFound
        const [device] = yield* devices.find({
          conditions: [{ _tag: "Equals", column: "userCode", value: code }],
          order: [{ column: "uid", direction: "asc" }],
          limit: 1
        })
        const now = (yield* DateTime.now).epochMillis
        if (device === undefined || device.status !== "pending" || device.expireTime <= now) return yield* notFound
        return device
      })

    /**
     * A device's poll (RFC 8628 §3.4): the approving person's identity once (the authorization is then gone), else
     * why not yet or not at all; a poll sooner than the interval after the last one slows the client down.
     */
    const poll = (deviceCode: string) =>
      Effect.flatMap(
        stored(store.transaction(Effect.gen(function*() {
          const [device] = yield* devices.find({
            conditions: [{ _tag: "Equals", column: "deviceCodeHash", value: hash(deviceCode) }],
            order: [{ column: "uid", direction: "asc" }],
            limit: 1
          })
          const now = (yield* DateTime.now).epochMillis
          if (device === undefined) return grantError("invalid_grant", "the device code is not known")
          const done = devices.delete({ ranges: [Uid.only(device.uid)] })
          if (device.expireTime <= now) {
            return yield* Effect.as(done, grantError("expired_token", "the device code has expired; start again"))
          }
          if (device.status === "denied") {
            return yield* Effect.as(done, grantError("access_denied", "the sign-in was refused"))
          }
          if (device.status === "approved") {
            return yield* Effect.as(done, device)
          }
          const early = device.lastPollTime !== null && now - device.lastPollTime < device.interval * 1000
          const interval = early ? device.interval + Duration.toSeconds(SignIn.pollBackoff) : device.interval
          yield* unexpectedConflict(
            devices.update(new Device({ ...device, lastPollTime: now, interval, updateTime: now }))
          )
          return early
            ? grantError("slow_down", `poll at most every ${interval} seconds`)
            : grantError("authorization_pending", "the person has not signed in yet")
        }))),
        (outcome) => outcome instanceof SignIn.DeviceGrantError ? Effect.fail(outcome) : Effect.succeed(outcome)
      )

    return { decide, authorize, pending, poll }
  })
