/** Prints the server's OpenAPI document (the one served at /openapi.json), for linting and publishing. */
import { Api } from "@arbor/api/Api"
import { OpenApi } from "@effect/platform"

process.stdout.write(`${JSON.stringify(OpenApi.fromApi(Api), null, 2)}\n`)
