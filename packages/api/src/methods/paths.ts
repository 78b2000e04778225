/**
 * The paths of custom methods: those after a uid, moved to a segment of their own for the router, and the colon a
 * client sends.
 */
import { HttpClient, HttpClientRequest } from "@effect/platform"

/**
 * The custom methods that follow a uid (`/groups/<uid>:requestGroupAccess`). The router cannot end a parameter at a
 * colon, so each is declared as a segment of its own (`/groups/:uid/requestGroupAccess`); the server moves it there
 * before routing (`UidPaths`), and clients and the OpenAPI document put the colon back.
 */
export const uidCustomMethods: ReadonlyArray<string> = [
  "requestGroupAccess",
  "generateScimToken",
  "regenerateScimToken",
  "revokeScimToken",
  "setScimEnabled",
  "checkAccountAssociation",
  "export",
  "apply",
  "approve",
  "deny"
]

const afterUid = new RegExp(`/(${uidCustomMethods.join("|")})$`)

/** A path with a custom method declared as the segment after a uid written as the protos write it. */
export const customMethodAfterUid = (path: string) => path.replace(afterUid, ":$1")

/**
 * For a typed client (`HttpApiClient.make(Api, { transformClient })`): the paths of the custom methods
 * (`/roleBindings:batchCreate`, `/identities:updateIdentityMetadata`, …) are declared with `::`, the router's literal
 * colon, which the client would send as it is; this sends one colon.
 */
export const customMethodPaths = HttpClient.mapRequest(HttpClientRequest.updateUrl((url) => {
  const colons = (path: string) => customMethodAfterUid(path.replaceAll("::", ":"))
  // Only the path: an IPv6 host (`http://[::1]:8080`) keeps its colons.
  if (!URL.canParse(url)) return colons(url)
  const parsed = new URL(url)
  parsed.pathname = colons(parsed.pathname)
  return parsed.toString()
}))
