/**
 * What the log's tail hands a delivering worker (`Deliveries`), so that it need not read it back from the store.
 */
import type { ChangeLog } from "@arbor/core"

/** How many entries a delivering worker's feed keeps; past it, the worker reads the log instead. */
const feedLimit = 1_000

/**
 * The entries of a subscription's groups the log's tail hands its worker while it delivers, so that it need not read
 * them back from the store. Complete from the moment it listens (before a read of the store) until it overflows or
 * the tail is lost; then the worker reads the store again.
 */
export class Feed {
  private entries: Array<ChangeLog.Entry> | undefined = undefined
  /** Keeps what comes from now on, all of it: called before a read of the store, which is then followed by it. */
  listen() {
    this.entries = []
  }
  /**
   * Keeps nothing from now on, until it listens again: the worker stopped delivering, or entries may have been missed
   * (too many, or the tail was lost), so what it kept is not complete.
   */
  stop() {
    this.entries = undefined
  }
  /** An entry of the subscription's groups, as the tail finds it. */
  push(entry: ChangeLog.Entry) {
    if (this.entries === undefined) return
    if (this.entries.length < feedLimit) this.entries.push(entry)
    else this.stop()
  }
  /** The entries after `position` it received since it listened, or undefined when they may not be all. */
  take(position: string) {
    const kept = this.entries
    if (kept === undefined) return undefined
    this.entries = []
    // Positions are of one width: their order is their strings'. What a read of the store found is not kept twice.
    return kept.filter((entry) => entry.position > position)
  }
}
