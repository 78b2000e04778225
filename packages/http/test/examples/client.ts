import { Api } from "@arbor/api/Api"
import { FetchHttpClient, HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import * as Effect from "effect/Effect"

/** Creates a folder `name` in `org` and lists the folders there, as the holder of `token`. */
export const createAndList = (baseUrl: string, token: string, org: string, name: string) =>
  Effect.gen(function*() {
    const arbor = yield* HttpApiClient.make(Api, {
      baseUrl,
      transformClient: HttpClient.mapRequest(HttpClientRequest.bearerToken(token))
    })
    const folder = yield* arbor.groups.create({ path: { uid: org }, payload: { name } })
    const page = yield* arbor.groups.list({ urlParams: { childrenOf: org } })
    return { created: folder.createTime, names: page.groups.map((group) => group.name) }
  }).pipe(
    Effect.catchTag("PermissionDenied", (e) => Effect.fail(`you need ${e.capability} on ${e.resource}`)),
    Effect.provide(FetchHttpClient.layer),
    Effect.runPromise
  )
