import { ModelSuite } from "@arbor/core/testing"
import * as Layer from "effect/Layer"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { SqliteStore } from "../src/index.js"

ModelSuite.suite("sqlite :memory:", Layer.suspend(() => SqliteStore.layer({ filename: ":memory:" })), { numRuns: 60 })

const dir = mkdtempSync(join(tmpdir(), "arbor-model-"))
let n = 0
ModelSuite.suite("sqlite file", Layer.suspend(() => SqliteStore.layer({ filename: join(dir, `model-${n++}.db`) })), {
  numRuns: 20
})
