/** Prints the server's OpenAPI document (the one served at /openapi.json), for linting and publishing. */
import { OpenApi } from "@effect/platform"
import { Api } from "./Api.js"

process.stdout.write(`${JSON.stringify(OpenApi.fromApi(Api), null, 2)}\n`)
