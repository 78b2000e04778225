/**
 * Limits on the unauthenticated sign-in endpoints (docs/operations.md, "Request limits"), per client address and
 * per server, counted in fixed windows in this process:
 * - more than `wrongUserCodes` wrong user codes from one address in a minute, and every user code it sends for the
 *   rest of that minute is refused, a valid one included (8 letters are guessed only by brute force);
 * - sign-ins begun (login transactions, kept 10 minutes) and device codes (kept 10 minutes) are capped per address
 *   and overall in every 10 minutes, so nobody can fill the store with them.
 * A refusal is RESOURCE_EXHAUSTED (429) with `Retry-After`.
 */
import { Errors } from "@arbor/core"
import { Windows } from "./FixedWindows.js"

/** What the limits allow. */
export interface Limits {
  /** Wrong user codes per address per minute. */
  readonly wrongUserCodes: number
  /** Sign-ins begun and device codes, per address and per 10 minutes. */
  readonly startsPerAddress: number
  /** Sign-ins begun and device codes, from everyone, per 10 minutes. */
  readonly startsOverall: number
}

/** The limits of the standalone server (docs/operations.md). */
export const defaults: Limits = { wrongUserCodes: 20, startsPerAddress: 60, startsOverall: 5_000 }

const minute = 60_000
const tenMinutes = 10 * minute

const exhausted = (description: string, retryAfterSeconds: number, reason: string) =>
  new Errors.ResourceExhausted({ description, retryAfterSeconds, reason })

/** The limits of one server. */
export const make = (limits: Limits = defaults) => {
  const wrongCodes = new Windows(minute)
  const startsByAddress = new Windows(tenMinutes)
  const startsOverall = new Windows(tenMinutes)
  const everyone = ""
  return {
    /** Refuses a user code from `address` once it sent too many wrong ones this minute. */
    checkUserCode: (address: string, now = Date.now()): Errors.ResourceExhausted | undefined =>
      wrongCodes.count(address, now) > limits.wrongUserCodes
        ? exhausted(
          "too many wrong codes from this address; wait before trying again",
          wrongCodes.retryAfter(address, now),
          "TOO_MANY_WRONG_CODES"
        )
        : undefined,

    /** Counts a wrong user code from `address`. */
    wrongUserCode: (address: string, now = Date.now()): void => wrongCodes.add(address, now),

    /** Counts a sign-in or device code started from `address`, or refuses it when a cap is reached. */
    start: (address: string, now = Date.now()): Errors.ResourceExhausted | undefined => {
      if (startsByAddress.count(address, now) >= limits.startsPerAddress) {
        return exhausted(
          "too many sign-ins started from this address; wait before starting another",
          startsByAddress.retryAfter(address, now),
          "TOO_MANY_SIGN_INS"
        )
      }
      if (startsOverall.count(everyone, now) >= limits.startsOverall) {
        return exhausted(
          "too many sign-ins in progress; wait before starting another",
          startsOverall.retryAfter(everyone, now),
          "TOO_MANY_SIGN_INS"
        )
      }
      startsByAddress.add(address, now)
      startsOverall.add(everyone, now)
      return undefined
    }
  }
}
