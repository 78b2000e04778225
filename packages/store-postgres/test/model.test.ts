import { ModelSuite } from "@arbor/core/testing"
import { freshStore } from "./databases.js"

ModelSuite.suite("postgres", freshStore(), { numRuns: 20 })
