/**
 * People: those who sign in through an OpenID provider. A person is a root-level identity (no parent group) made at
 * their first sign-in; the `people` table keeps them unique per (issuer, subject), its uid the identity's.
 */
import * as Effect from "effect/Effect"
import { createHash } from "node:crypto"
import * as Repository from "../../../engine/Repository.js"
import type { StoreService, Table } from "../../../engine/Store.js"
import { type Uid, unsafeMake } from "../../../engine/Uid.js"

/** What a provider's verified ID token says of a person. */
export interface Claims {
  readonly issuer: string
  readonly subject: string
  readonly email?: string | undefined
  readonly emailVerified: boolean
  /** The `name` claim. */
  readonly name?: string | undefined
  /** The person's groups at an organization's provider: the values of its groups claim, when it names one. */
  readonly groups?: ReadonlyArray<string> | undefined
}

/**
 * The uid a person of `issuer` and `subject` gets at their first sign-in: the SHA-1 of the two, so that it is known
 * before (`Identities.lookup`). A root uid is 40 hex characters, as a SHA-1 is.
 */
export const uidFor = (issuer: string, subject: string): Uid =>
  unsafeMake(createHash("sha1").update(`${issuer}\n${subject}`).digest("hex"))

/** The longest name an identity may have. */
const maxName = 63

/**
 * The name a new person's identity gets: the email's local part, else the `name` claim, folded to the name pattern
 * (lowercase ASCII letters, digits, space, `.`, `_`, `-`); `user` when nothing is left.
 */
export const nameFor = (claims: Claims): string => {
  const fold = (text: string) =>
    text.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").toLowerCase().replace(/[^a-z0-9 ._-]+/g, "").trim()
      .replace(/\s+/g, " ").slice(0, maxName).trim()
  const local = claims.email?.split("@")[0] ?? ""
  return fold(local) || fold(claims.name ?? "") || "user"
}

/** `name` with a suffix that tells it from a taken one, within the length limit. */
export const disambiguate = (name: string): string => {
  const suffix = `-${Buffer.from(crypto.getRandomValues(new Uint8Array(3))).toString("hex")}`
  return name.slice(0, maxName - suffix.length) + suffix
}

/** How people are stored: one row per (issuer, subject), its uid the person's identity's. */
export const table: Table = {
  name: "people",
  columns: {
    issuer: { type: "text" },
    subject: { type: "text" },
    createTime: { type: "integer" }
  },
  unique: [["issuer", "subject"]],
  indexes: []
}

/** The uid of the person of `issuer` and `subject` when they have signed in (and not been deleted since). */
export const find = (store: StoreService, issuer: string, subject: string) =>
  Effect.map(
    Repository.orInternal(store.find(table, {
      conditions: [
        { _tag: "Equals", column: "issuer", value: issuer },
        { _tag: "Equals", column: "subject", value: subject }
      ],
      order: [{ column: "uid", direction: "asc" }],
      limit: 1
    })),
    ([known]) => known === undefined ? undefined : unsafeMake(String(known.uid))
  )
