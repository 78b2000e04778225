/**
 * The console (docs/console.md) in Chromium against the standalone server, over a hierarchy of 10,000 folders (an
 * organization with 100 folders of 99 each): opening a level of the tree, from the click until its 100 rows are on
 * the screen, beside the same page of the list fetched by the page itself (the floor: the request without the
 * rendering), and the size of the script a first load downloads.
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { gzipSync } from "node:zlib"
import { chromium } from "playwright-core"
import type { Comparison, Figure } from "./Harness.js"
import { compare, section } from "./Harness.js"
import { root, startArbor } from "./Servers.js"

/** Creates `names` as folders of `parent`, a few at a time; answers their uids. */
const createFolders = async (
  base: string,
  token: string,
  parent: string,
  names: ReadonlyArray<string>
): Promise<Array<string>> => {
  const uids: Array<string> = []
  for (let i = 0; i < names.length; i += 8) {
    uids.push(
      ...await Promise.all(
        names.slice(i, i + 8).map(async (name) => {
          const response = await fetch(`${base}/iam/v2beta1/groups/${parent}`, {
            method: "POST",
            headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
            body: JSON.stringify({ name })
          })
          if (response.status !== 200) throw new Error(`creating ${name}: ${response.status}`)
          return ((await response.json()) as { uid: string }).uid
        })
      )
    )
  }
  return uids
}

const chromiumPath = () =>
  process.env.ARBOR_CHROMIUM ??
    execFileSync("sh", ["-c", "command -v chromium || command -v chromium-browser"], { encoding: "utf8" }).trim()

/** Runs the suite; returns its report section. */
export const run = async (_scale: number): Promise<string> => {
  const dir = mkdtempSync(join(tmpdir(), "arbor-bench-console-"))
  const server = await startArbor(join(dir, ".arbor"))
  const browser = await chromium.launch({
    executablePath: chromiumPath(),
    args: ["--no-sandbox", "--disable-gpu", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]
  })
  try {
    const { base, org, token } = server
    const top = await createFolders(base, token, org, Array.from({ length: 100 }, (_, i) => `team-${i}`))
    for (const folder of top) {
      await createFolders(base, token, folder, Array.from({ length: 99 }, (_, i) => `service-${i}`))
    }
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
    await page.addInitScript(`sessionStorage.setItem("arbor.console.token", ${JSON.stringify(token)})`)
    await page.goto(`${base}/console/#/groups/${encodeURIComponent(org)}/folders`)
    const tree = page.getByRole("list", { name: "Folders", exact: true })
    await tree.getByRole("link", { name: "team-0", exact: true }).waitFor()
    /**
     * Opens team-0's level (99 folders) in the page and resolves once every row is in the document; then closes it
     * again (a closed level is fetched afresh when opened).
     */
    const openLevel = () =>
      page.evaluate(`new Promise((resolve) => {
        const toggle = (name) => document.querySelector(\`button[aria-label="\${name} team-0"]\`)
        const observer = new MutationObserver(() => {
          const level = document.querySelector('[aria-label="Folders of team-0"]')
          if (level === null || level.querySelectorAll("a").length < 99) return
          observer.disconnect()
          toggle("Close").click()
          resolve()
        })
        observer.observe(document.body, { childList: true, subtree: true })
        toggle("Open").click()
      })`)
    const url = `/iam/v2beta1/groups?uidp.children_of=${encodeURIComponent(top[0]!)}&page_size=100&order_by=name`
    const fetchLevel = () =>
      page.evaluate<number>(`fetch(${JSON.stringify(url)}, {
        headers: { authorization: ${JSON.stringify(`Bearer ${token}`)} }
      }).then((response) => response.json()).then((page) => page.groups.length)`)
    const opening: Comparison = await compare("Opening a level of the tree (99 folders of 10,000)", {
      ours: openLevel,
      baseline: fetchLevel,
      baselineName: "the same page of the list, fetched by the page",
      perRound: 10
    })
    const gzipped = gzipSync(readFileSync(join(root, "packages/console/dist/console.js"))).length
    const figures: ReadonlyArray<Figure> = [
      {
        name: "Opening a level of the tree, from the click until every row is in the page",
        value: `${opening.ours.toFixed(0)} ms`,
        target: "< 200 ms",
        met: opening.ours < 200
      },
      {
        name: "Script a first load downloads (gzipped)",
        value: `${(gzipped / 1000).toFixed(0)} KB`,
        target: "≤ 300 KB",
        met: gzipped <= 300_000
      }
    ]
    return section(
      "Console",
      [
        "Chromium (headless) against the standalone server on SQLite, over 10,000 folders (an organization with 100",
        "folders of 99): a level of the tree opened (the click, the list request, the rows rendered) beside the same",
        "request made by the page, and the gzipped size of the console's script."
      ],
      [opening],
      figures
    )
  } finally {
    await browser.close()
    server.child.kill("SIGTERM")
    rmSync(dir, { recursive: true, force: true })
  }
}
