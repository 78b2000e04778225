/**
 * Terms acceptances: a record that a group (an organization, usually) accepted a legal document, by its id, who
 * accepted it and when (docs/api.md §13). A document is accepted once per group; accepting it again changes nothing.
 */
import * as Schema from "effect/Schema"
import { Timestamp } from "../engine/internal/fields.js"
import type { Table } from "../engine/Store.js"
import { Uid } from "../engine/Uid.js"
import type * as ChangeLog from "../events/ChangeLog.js"

/** The capabilities of the two operations (docs/api.md §7). */
export const permissions = { accept: "terms.accept", list: "terms.list" } as const

/** One group's acceptance of one document. */
export class TermsAcceptance extends Schema.Class<TermsAcceptance>("@arbor/core/TermsAcceptance")({
  uid: Uid,
  /** The document's id (`tos.v1`). */
  docId: Schema.String,
  /** The identity that accepted it (`system` for the engine itself). */
  acceptedBy: Schema.String,
  /** The group that accepted it. */
  orgUid: Uid,
  createTime: Timestamp
}) {}

/** Documents one request may accept at most. */
export const maxDocuments = 32

/** A document id: letters, digits, `.`, `_` and `-`, at most 128 characters (`guardener-tos.v1`). */
export const DocumentId = Schema.String.pipe(
  Schema.filter((id) => /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(id), {
    message: () => "must be 1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit"
  })
)

/** What a caller gives to accept documents: their ids, one at least. */
export const AcceptTerms = Schema.Struct({
  documentIds: Schema.propertySignature(
    Schema.Array(DocumentId).pipe(
      Schema.filter((ids) => ids.length > 0 && ids.length <= maxDocuments, {
        message: () => `must name 1 to ${maxDocuments} documents`
      })
    )
  ).annotations({ missingMessage: () => `must name 1 to ${maxDocuments} documents` })
})
export type AcceptTerms = typeof AcceptTerms.Encoded

/** How acceptances are stored: below the group that accepted, one per document. */
export const table: Table = {
  name: "terms_acceptances",
  events: {
    kind: "terms_acceptance",
    // AcceptTerms' events annotation; acceptances are never changed or removed but with their group.
    types: {
      created: "dev.chainguard.api.iam.terms.accepted.v1",
      updated: "dev.chainguard.api.iam.terms.updated.v1",
      deleted: "dev.chainguard.api.iam.terms.deleted.v1"
    }
  } satisfies ChangeLog.Logged,
  columns: {
    docId: { type: "text" },
    acceptedBy: { type: "text" },
    orgUid: { type: "text" },
    createTime: { type: "integer" }
  },
  unique: [["parent", "docId"]],
  indexes: [["parent"], ["createTime"]]
}
