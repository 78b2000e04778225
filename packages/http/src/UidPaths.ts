/**
 * Uids travel unescaped in paths (docs/api.md §3): `/iam/v2beta1/groups/<root>/<child>` names the uid
 * `<root>/<child>`. The API's routes take a uid as their last segment (`/groups/:uid`), or before a fixed last one
 * (`/repos/:uid/readme`), or before a custom method (`/groups/<uid>:requestGroupAccess`, declared as
 * `/groups/:uid/requestGroupAccess`: `Api.uidCustomMethods`), so before routing the uid's part of such a path is
 * folded into one segment, its slashes escaped (`%2F`, which the router decodes again), and a custom method is moved
 * into a segment of its own.
 */
import { Api, uidCustomMethods } from "@arbor/api/Api"
import { HttpApi } from "@effect/platform"

/** The paths before a `:uid` segment, such as `/iam/v2beta1/groups/`, and the fixed segments after one, if any. */
const uidRoutes: ReadonlyMap<string, ReadonlySet<string>> = (() => {
  const routes = new Map<string, Set<string>>()
  HttpApi.reflect(Api, {
    onGroup() {},
    onEndpoint({ endpoint }) {
      const at = endpoint.path.indexOf("/:uid")
      if (at < 0) return
      const prefix = endpoint.path.slice(0, at + 1)
      const suffix = endpoint.path.slice(at + "/:uid".length)
      routes.set(prefix, (routes.get(prefix) ?? new Set()).add(suffix))
    }
  })
  return routes
})()

/** The segments of a path before its uid: every uid route has three (`/iam/v2beta1/groups/`). */
const prefixSegments = 3

/** The path with the uid after a uid route's prefix (and before its suffix, if any) folded into one segment. */
export const fold = (path: string): string => {
  let end = 0
  for (let i = 0; i < prefixSegments; i++) {
    end = path.indexOf("/", end + 1)
    if (end < 0) return path
  }
  const suffixes = uidRoutes.get(path.slice(0, end + 1))
  if (suffixes === undefined) return path
  // A trailing slash is the same path (the router ignores it).
  const rest = path.slice(end + 1).replace(/\/$/, "")
  const suffix = [...suffixes].find((s) => s !== "" && rest.endsWith(onTheWire(s))) ?? ""
  const uid = rest.slice(0, rest.length - onTheWire(suffix).length)
  return uid.includes("/") || suffix !== onTheWire(suffix)
    ? path.slice(0, end + 1) + uid.replaceAll("/", "%2F") + suffix
    : path
}

/** A suffix as a client sends it: a custom method (`/requestGroupAccess`) follows the uid with a colon. */
const onTheWire = (suffix: string) => uidCustomMethods.includes(suffix.slice(1)) ? `:${suffix.slice(1)}` : suffix
