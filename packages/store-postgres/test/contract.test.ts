import { StoreContract } from "@arbor/core/testing"
import { freshStore } from "./databases.js"

StoreContract.suite("postgres", freshStore())
