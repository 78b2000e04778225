/**
 * Counts per key in fixed windows, in this process: the request limits of the sign-in and SCIM endpoints.
 */

/** How many keys a window keeps before it drops those whose window has passed. */
const sweepAt = 10_000

/** Counts per key in fixed windows of `length` milliseconds. */
export class Windows {
  private readonly counts = new Map<string, { start: number; count: number }>()
  constructor(private readonly length: number) {}

  private current(key: string, now: number) {
    const found = this.counts.get(key)
    if (found !== undefined && now - found.start < this.length) return found
    if (this.counts.size >= sweepAt) {
      for (const [k, w] of this.counts) if (now - w.start >= this.length) this.counts.delete(k)
    }
    const fresh = { start: now, count: 0 }
    this.counts.set(key, fresh)
    return fresh
  }

  /** The count so far in `key`'s window. */
  count(key: string, now: number): number {
    const window = this.counts.get(key)
    return window !== undefined && now - window.start < this.length ? window.count : 0
  }

  /** Adds one to `key`'s window. */
  add(key: string, now: number): void {
    this.current(key, now).count++
  }

  /** Seconds until `key`'s window ends (at least 1). */
  retryAfter(key: string, now: number): number {
    const start = this.counts.get(key)?.start ?? now
    return Math.max(1, Math.ceil((start + this.length - now) / 1000))
  }
}
