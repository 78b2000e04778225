/**
 * Uids travel unescaped in paths (docs/api.md §3): `/iam/v2beta1/groups/<root>/<child>` names the uid
 * `<root>/<child>`. The API's routes take a uid as their last segment (`/groups/:uid`), so before routing the rest of
 * such a path is folded into that one segment, its slashes escaped (`%2F`, which the router decodes again).
 */
import { Api } from "@arbor/api/Api"
import { HttpApi } from "@effect/platform"

/** The paths before a `:uid` segment, such as `/iam/v2beta1/groups/`. */
const uidRoutes: ReadonlySet<string> = (() => {
  const prefixes = new Set<string>()
  HttpApi.reflect(Api, {
    onGroup() {},
    onEndpoint({ endpoint }) {
      if (endpoint.path.endsWith("/:uid")) prefixes.add(endpoint.path.slice(0, -":uid".length))
    }
  })
  return prefixes
})()

/** The segments of a path before its uid: every uid route has three (`/iam/v2beta1/groups/`). */
const prefixSegments = 3

/** The path with everything after a uid route's prefix folded into one segment. */
export const fold = (path: string): string => {
  let end = 0
  for (let i = 0; i < prefixSegments; i++) {
    end = path.indexOf("/", end + 1)
    if (end < 0) return path
  }
  // A trailing slash is the same path (the router ignores it).
  const rest = path.slice(end + 1).replace(/\/$/, "")
  return rest.includes("/") && uidRoutes.has(path.slice(0, end + 1))
    ? path.slice(0, end + 1) + rest.replaceAll("/", "%2F")
    : path
}
