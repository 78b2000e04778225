import * as MemoryStore from "../src/MemoryStore.js"
import { ModelSuite } from "../src/testing/index.js"

ModelSuite.suite("memory", MemoryStore.layer)
