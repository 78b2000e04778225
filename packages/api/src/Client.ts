/**
 * The API's typed client (`HttpApiClient` over `Api`), as one caller: every request carries its bearer token, and the
 * custom methods' paths are written as the protos write them. The command-line client and the console both make it
 * here, over the `HttpClient` each provides (Node's, the browser's `fetch`).
 */
import { HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import type * as Effect from "effect/Effect"
import { Api, customMethodPaths } from "./Api.js"

/** The typed client of the API at `baseUrl` (else where the `HttpClient` sends), as the holder of `token`. */
export const make = (options: { readonly baseUrl?: string; readonly token: string }) =>
  HttpApiClient.make(Api, {
    ...(options.baseUrl === undefined ? {} : { baseUrl: options.baseUrl }),
    transformClient: (client) =>
      customMethodPaths(HttpClient.mapRequest(client, HttpClientRequest.bearerToken(options.token)))
  })

/** The typed client. */
export type Client = Effect.Effect.Success<ReturnType<typeof make>>
