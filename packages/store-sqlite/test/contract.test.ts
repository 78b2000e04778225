import { StoreContract } from "@arbor/core/testing"
import * as Layer from "effect/Layer"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { SqliteStore } from "../src/index.js"

StoreContract.suite("sqlite :memory:", Layer.suspend(() => SqliteStore.layer({ filename: ":memory:" })))

const dir = mkdtempSync(join(tmpdir(), "arbor-contract-"))
let n = 0
StoreContract.suite("sqlite file", Layer.suspend(() => SqliteStore.layer({ filename: join(dir, `store-${n++}.db`) })))
