import { ConcurrencySuite } from "@arbor/core/testing"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { PostgresStore } from "../src/index.js"
import { freshDatabase } from "./databases.js"

ConcurrencySuite.suite(
  "postgres, two pools",
  Effect.map(freshDatabase, (url) => PostgresStore.layer({ url: Redacted.make(url), maxConnections: 4 }))
)
