/**
 * Where the console is: its route lives in the page's fragment (`#/groups/<uid>/bindings`), so every view has an
 * address a person can keep or share, and the server serves one page. A uid travels escaped in its segment.
 */
import { useEffect, useState } from "preact/hooks"

/** A group's sections. */
export const sections = [
  ["folders", "Folders"],
  ["identities", "Identities"],
  ["bindings", "Role bindings"],
  ["roles", "Roles"],
  ["invites", "Invites"],
  ["providers", "Identity providers"],
  ["accounts", "Cloud accounts"],
  ["subscriptions", "Subscriptions"]
] as const

export type Section = typeof sections[number][0]

/** The console's views. */
export type Route =
  | { readonly _tag: "Home" }
  | { readonly _tag: "Group"; readonly uid: string; readonly section: Section }
  | { readonly _tag: "Identity"; readonly uid: string }
  | { readonly _tag: "Audit"; readonly group?: string | undefined }
  | { readonly _tag: "Access" }
  | { readonly _tag: "Elevations" }

const isSection = (s: string | undefined): s is Section => sections.some(([name]) => name === s)

/** The route a fragment names (anything unknown is home). */
export const parse = (hash: string): Route => {
  const [, kind, uid, rest] = hash.replace(/^#/, "").split("/").map(decodeURIComponent)
  if (kind === "groups" && uid !== undefined && uid !== "") {
    return { _tag: "Group", uid, section: isSection(rest) ? rest : "folders" }
  }
  if (kind === "identities" && uid !== undefined && uid !== "") return { _tag: "Identity", uid }
  if (kind === "audit") return uid === undefined || uid === "" ? { _tag: "Audit" } : { _tag: "Audit", group: uid }
  if (kind === "access") return { _tag: "Access" }
  if (kind === "access-requests") return { _tag: "Elevations" }
  return { _tag: "Home" }
}

/** The fragment of a route: what links point at. */
export const href = (route: Route): string => {
  switch (route._tag) {
    case "Home":
      return "#/"
    case "Group":
      return `#/groups/${encodeURIComponent(route.uid)}/${route.section}`
    case "Identity":
      return `#/identities/${encodeURIComponent(route.uid)}`
    case "Audit":
      return route.group === undefined ? "#/audit" : `#/audit/${encodeURIComponent(route.group)}`
    case "Access":
      return "#/access"
    case "Elevations":
      return "#/access-requests"
  }
}

/** The current route, following the fragment. */
export const useRoute = (): Route => {
  const [route, setRoute] = useState(() => parse(location.hash))
  useEffect(() => {
    const follow = () => setRoute(parse(location.hash))
    addEventListener("hashchange", follow)
    return () => removeEventListener("hashchange", follow)
  }, [])
  return route
}

/** A group's page. */
export const group = (uid: string, section: Section = "folders"): Route => ({ _tag: "Group", uid, section })
