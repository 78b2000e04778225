/**
 * Scale: 100k groups and 100k role bindings, loaded through the services. Pages must cost about what they return,
 * not what the table holds: asserted by counting the rows the in-memory store reads, never by timing.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type { ListOptions, Page } from "../src/engine/Lists.js"
import type { Principal as PrincipalType } from "../src/iam/Principal.js"
import { Arbor, Groups, Identities, MemoryStore, Principal, Role, RoleBindings } from "../src/index.js"
import { claimMatch } from "./fixtures.js"

const folders = 100
const perFolder = 999
const identitiesCount = 1000

describe("scale (in-memory store)", () => {
  it.live(
    "100k groups and 100k bindings: every page reads about a page of rows, counts read none",
    () =>
      Effect.gen(function*() {
        const groups = yield* Groups.Groups
        const identities = yield* Identities.Identities
        const bindings = yield* RoleBindings.RoleBindings
        const store = yield* MemoryStore.MemoryStore

        const org = yield* groups.createRoot(Principal.system, { name: "org" })
        const tops: Array<string> = []
        for (let f = 0; f < folders; f++) {
          const top = yield* groups.create(Principal.system, org.uid, { name: `folder ${f}` })
          tops.push(top.uid)
          for (let i = 0; i < perFolder; i++) yield* groups.create(Principal.system, top.uid, { name: `g${i}` })
          yield* Effect.sleep(0) // let the test runner's worker answer its own messages during the long load
        }
        const viewer = Role.builtInByName("viewer")!.uid
        const owner = yield* identities.create(Principal.system, org.uid, {
          name: "owner",
          claimMatch: claimMatch("owner")
        })
        yield* bindings.create(Principal.system, org.uid, {
          identityUid: owner.uid,
          roleUid: Role.builtInByName("owner")!.uid
        })
        for (let n = 0; n < identitiesCount - 1; n++) {
          const identity = yield* identities.create(Principal.system, org.uid, {
            name: `i${n}`,
            claimMatch: claimMatch(`i${n}`)
          })
          for (const top of tops) {
            yield* bindings.create(Principal.system, top, { identityUid: identity.uid, roleUid: viewer })
          }
        }
        const ownerPrincipal = Principal.identity(owner.uid)
        const totalGroups = 1 + folders * (1 + perFolder)
        const totalBindings = 1 + (identitiesCount - 1) * folders

        /** Reads of one call. */
        const reads = <A, E>(effect: Effect.Effect<A, E>) =>
          Effect.gen(function*() {
            const before = store.rowsRead()
            const result = yield* effect
            return [result, store.rowsRead() - before] as const
          })

        /** Follows every page; returns the items seen and the most rows read by one page. */
        const walk = <A extends { readonly uid: string }>(
          list: (principal: PrincipalType, options: ListOptions) => Effect.Effect<Page<A>, unknown>,
          principal: PrincipalType,
          options: ListOptions
        ) =>
          Effect.gen(function*() {
            let pageToken: string | undefined
            let items = 0
            let worst = 0
            let pages = 0
            const uids = new Set<string>()
            do {
              const [page, n] = yield* reads(list(principal, { ...options, pageToken }))
              items += page.items.length
              for (const item of page.items) {
                uids.add(item.uid)
              }
              worst = Math.max(worst, n)
              pages++
              pageToken = page.nextPageToken
            } while (pageToken !== undefined)
            return { distinct: uids.size, items, pages, worst }
          })

        // The first page and its count: a seek and a walk of one page; the count is answered from the index.
        const [first, firstReads] = yield* reads(groups.list(ownerPrincipal, { descendantsOf: org.uid, pageSize: 50 }))
        assert.strictEqual(first.totalCount, totalGroups - 1)
        assert.isAtMost(firstReads, 60, `first page of groups read ${firstReads} rows`)

        // Every page of 100k groups in name order, as the owner: no page reads more than a few pages' worth.
        const byName = yield* walk(groups.list, ownerPrincipal, { pageSize: 200, orderBy: "name desc" })
        assert.strictEqual(byName.items, totalGroups)
        assert.strictEqual(byName.distinct, totalGroups)
        assert.isAtMost(byName.worst, 3 * 200, `worst page of groups by name read ${byName.worst} rows`)

        // Every page of 100k bindings, hydrated: the page, its identities, groups and roles.
        const allBindings = yield* walk(bindings.list, Principal.system, { pageSize: 200, orderBy: "create_time desc" })
        assert.strictEqual(allBindings.distinct, totalBindings)
        assert.isAtMost(allBindings.worst, 5 * 200, `worst page of bindings read ${allBindings.worst} rows`)

        // One folder's bindings, through its equality index, deep into the table.
        const folderBindings = yield* walk(bindings.list, ownerPrincipal, { childrenOf: tops[73]!, pageSize: 50 })
        assert.strictEqual(folderBindings.distinct, identitiesCount - 1)
        assert.isAtMost(
          folderBindings.worst,
          5 * 50 + 10,
          `worst page of one folder's bindings read ${folderBindings.worst}`
        )

        // A viewer of one folder: visibility is a range, so the other 99 folders are never read.
        const member = Principal.identity((yield* identities.list(Principal.system, { name: "i7" })).items[0]!.uid)
        const [visible, visibleReads] = yield* reads(groups.list(member, { pageSize: 50, orderBy: "uid" }))
        assert.strictEqual(visible.totalCount, folders * (1 + perFolder))
        assert.isAtMost(visibleReads, 50 + 1 + 2 * folders, `viewer's first page read ${visibleReads} rows`)
      }).pipe(Effect.provide(Arbor.layerMemory)),
    { timeout: 600_000 }
  )
})
