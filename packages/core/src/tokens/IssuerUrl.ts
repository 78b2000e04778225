/**
 * Issuer URLs read strictly, because the engine fetches from them on behalf of callers: `https`, no user name or
 * password, no query or fragment, and written in the one form a URL parser gives back (lowercase host, no default
 * port, no trailing dot, no percent-encoding tricks), so that what is matched against an identity's claim match is
 * exactly where a fetch goes. Plain `http` and loopback hosts are for development, and only when allowed.
 */
import * as NetworkAddress from "../engine/NetworkAddress.js"

/** How strictly to read a URL. */
export interface Options {
  /** Accept `localhost` and loopback literals, over `http` too (development and tests only). */
  readonly allowLoopback: boolean
  /** Accept a query (documents named by a discovery document, never issuers). */
  readonly allowQuery?: boolean
}

/** Why `raw` is not an acceptable issuer URL, or undefined when it is. */
export const error = (raw: string, options: Options): string | undefined => {
  if (!URL.canParse(raw)) return "must be an https:// URL"
  const url = new URL(raw)
  const loopback = NetworkAddress.isLoopbackHost(url.hostname)
  if (url.protocol !== "https:" && !(url.protocol === "http:" && options.allowLoopback && loopback)) {
    return options.allowLoopback
      ? "must be an https:// URL (http:// only on localhost or a loopback address)"
      : "must be an https:// URL"
  }
  if (url.username !== "" || url.password !== "" || raw.includes("@")) return "must not hold a user name or password"
  if (raw.includes("#")) return "must not hold a fragment"
  if (raw.includes("?") && options.allowQuery !== true) return "must not hold a query"
  if (url.hostname.endsWith(".")) return "must name its host without a trailing dot"
  const canonical = url.href
  if (raw !== canonical && !(url.pathname === "/" && url.search === "" && `${raw}/` === canonical)) {
    return `must be written as ${canonical} (lowercase host, no default port, plain characters)`
  }
  const kind = NetworkAddress.kind(url.hostname)
  if ((loopback && !options.allowLoopback) || (kind !== undefined && kind !== "public" && !loopback)) {
    return "must be on a public address"
  }
  return undefined
}
