/**
 * What a browser downloads on first load: the page, its one script and its one style, all from the server (nothing
 * from elsewhere), the script at most 300 KB gzipped (docs/console.md).
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { gzipSync } from "node:zlib"
import { assert, describe, it } from "vitest"

const dist = join(import.meta.dirname, "..", "dist")

describe("the built console", () => {
  it("loads one script and one style, its own, and at most 300 KB of gzipped script", () => {
    const page = readFileSync(join(dist, "index.html"), "utf8")
    const loads = [...page.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1])
    assert.deepStrictEqual(loads, ["/console/console.css", "/console/console.js"])
    assert.notMatch(page, /<script>|<style|style="/, "no inline script or style (the policy allows neither)")
    const script = readFileSync(join(dist, "console.js"))
    assert.isAtMost(gzipSync(script).length, 300_000)
  })
})
