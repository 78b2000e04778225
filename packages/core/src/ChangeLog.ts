/**
 * The change log (DECISIONS §14): every committed write appends, in its own transaction, an entry per resource it
 * created, updated or deleted, named by a CloudEvent type. The types are the reference protos' (each write method's
 * `chainguard.annotations.events` option); a write the protos name none for is named in the same scheme, and
 * listed in docs/api.md. Each resource declares its types beside its table (`Table.events`).
 */

/** The CloudEvent types of a resource's writes. */
export interface EventTypes {
  readonly created: string
  readonly updated: string
  readonly deleted: string
}

/** The types `<prefix>.created.v1`, `<prefix>.updated.v1` and `<prefix>.deleted.v1`. */
export const eventTypes = (prefix: string): EventTypes => ({
  created: `${prefix}.created.v1`,
  updated: `${prefix}.updated.v1`,
  deleted: `${prefix}.deleted.v1`
})
