/**
 * The API's typed client (`HttpApiClient` over `Api`), as one caller: every request carries its bearer token, and the
 * custom methods' paths are written as the protos write them. The command-line client and the console both make it
 * here, over the `HttpClient` each provides (Node's, the browser's `fetch`).
 *
 * A group's methods are made when the group is first used: making every group's (each response's decoder compiled)
 * cost a call of `arbor`, which uses one or two, about a tenth of its CPU.
 */
import { type HttpApi, HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import * as Effect from "effect/Effect"
import { Api, customMethodPaths } from "./Api.js"

type Declared = typeof Api extends HttpApi.HttpApi<infer _Id, infer G, infer E, infer _R> ? [G, E] : never
type GroupName = Declared[0]["identifier"]

/** The typed client, as `HttpApiClient.make` types it. */
export type Client = HttpApiClient.Client<Declared[0], Declared[1], never>

/** The typed client of the API at `baseUrl` (else where the `HttpClient` sends), as the holder of `token`. */
export const make = (options: { readonly baseUrl?: string; readonly token: string }): Effect.Effect<
  Client,
  never,
  HttpClient.HttpClient
> =>
  Effect.map(HttpClient.HttpClient, (httpClient) => {
    const caller = customMethodPaths(HttpClient.mapRequest(httpClient, HttpClientRequest.bearerToken(options.token)))
    const made = new Map<GroupName, unknown>()
    const groupOf = (group: GroupName) => {
      let methods = made.get(group)
      if (methods === undefined) {
        // Making a group's methods reads its declaration only: nothing asynchronous, nothing that can fail.
        methods = Effect.runSync(HttpApiClient.group(Api, {
          group,
          httpClient: caller,
          ...(options.baseUrl === undefined ? {} : { baseUrl: options.baseUrl })
        }))
        made.set(group, methods)
      }
      return methods
    }
    const client: Record<string, unknown> = {}
    for (const group of Object.keys(Api.groups) as ReadonlyArray<GroupName>) {
      Object.defineProperty(client, group, { enumerable: true, get: () => groupOf(group) })
    }
    // Each property is the group `HttpApiClient.group` makes, as `HttpApiClient.make` would have made it.
    return client as Client
  })
