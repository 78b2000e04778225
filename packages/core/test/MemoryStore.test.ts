import * as MemoryStore from "../src/engine/MemoryStore.js"
import { StoreContract } from "../src/testing/index.js"

StoreContract.suite("memory", MemoryStore.layer)
