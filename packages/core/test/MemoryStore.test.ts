import * as MemoryStore from "../src/MemoryStore.js"
import { StoreContract } from "../src/testing/index.js"

StoreContract.suite("memory", MemoryStore.layer)
