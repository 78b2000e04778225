/**
 * Verified organizations (docs/api.md §13): a platform admin marks an organization `verified` when its name is a
 * domain it owns. A person whose email at that domain the server's own provider verified may then find it
 * (`LookupGroup`) and ask its owners for access (`RequestGroupAccess`): each request is kept here, below the
 * organization, and its change-log entry is what tells the owners (their subscriptions and audit trail).
 */
import * as Schema from "effect/Schema"
import { Timestamp } from "../engine/internal/fields.js"
import type { Table } from "../engine/Store.js"
import { Uid } from "../engine/Uid.js"
import type * as ChangeLog from "../events/ChangeLog.js"

/** One person's request for access to a verified organization. */
export class GroupAccessRequest extends Schema.Class<GroupAccessRequest>("@arbor/core/GroupAccessRequest")({
  uid: Uid,
  /** Who asks: their identity's uid and verified email. */
  requester: Uid,
  email: Schema.String,
  createTime: Timestamp
}) {}

/** How long after a request the same person's next one to the same organization is refused. */
export const repeatAfterMillis = 24 * 60 * 60 * 1000

/** Free and disposable mail domains: an address there says nothing about who employs its owner. */
export const blockedDomains: ReadonlySet<string> = new Set([
  "gmail.com",
  "googlemail.com",
  "outlook.com",
  "hotmail.com",
  "live.com",
  "msn.com",
  "yahoo.com",
  "ymail.com",
  "aol.com",
  "icloud.com",
  "me.com",
  "mac.com",
  "proton.me",
  "protonmail.com",
  "pm.me",
  "gmx.com",
  "gmx.net",
  "web.de",
  "mail.com",
  "yandex.com",
  "yandex.ru",
  "zoho.com",
  "fastmail.com",
  "hey.com",
  "tutanota.com",
  "qq.com",
  "163.com",
  "mailinator.com"
])

/** A domain an organization may be named by to be verified: lower-case labels with a dot, as DNS names go. */
export const isDomain = (name: string): boolean =>
  name.length <= 253 && /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/.test(name)

/** The domain of an email the server's own provider verified, when it may look for a verified organization. */
export const eligibleDomain = (email: string | undefined): string | undefined => {
  const at = email?.lastIndexOf("@") ?? -1
  if (email === undefined || at < 1) return undefined
  const domain = email.slice(at + 1).toLowerCase()
  return isDomain(domain) && !blockedDomains.has(domain) ? domain : undefined
}

/** How requests are stored: below the organization asked. */
export const table: Table = {
  name: "group_access_requests",
  events: {
    kind: "group_access_request",
    types: {
      // RequestGroupAccess has no events annotation in the protos; these are ours.
      created: "dev.chainguard.api.iam.group.access_requested.v1",
      updated: "dev.chainguard.api.iam.group.access_request.updated.v1",
      deleted: "dev.chainguard.api.iam.group.access_request.deleted.v1"
    }
  } satisfies ChangeLog.Logged,
  columns: {
    requester: { type: "text" },
    email: { type: "text" },
    createTime: { type: "integer" }
  },
  unique: [],
  indexes: [["parent"], ["requester"], ["createTime"]]
}
