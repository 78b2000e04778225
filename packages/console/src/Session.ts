/**
 * Who is signed in: an API token of this server, kept in the tab's session storage (gone when the tab closes), and
 * what its claims say (the identity, the email, the expiry). A sign-in through the server's provider hands the token
 * over in the page's fragment (`#token=…`), which never reaches a server or a log; it is taken from there at once.
 */

/** A signed-in person (or workload, when a token was pasted). */
export interface Session {
  readonly token: string
  /** The identity's uid (the token's `sub`). */
  readonly identity: string
  readonly email?: string | undefined
  /** When the token expires, in milliseconds since the epoch. */
  readonly expiresAt: number
}

const storageKey = "arbor.console.token"

/**
 * The sign-in this tab started (`begin`): a random state the server hands back beside the token, and when it expires
 * (with the server's sign-in transaction). Only that return is taken, once.
 */
const pendingKey = "arbor.console.signingIn"

/** How long a sign-in may take: the server's sign-in transaction lasts as long. */
const signInLifetimeMillis = 10 * 60 * 1000

/** The claims of a JWT, unverified (the server verifies every call); undefined when it is not one. */
const claimsOf = (token: string): Record<string, unknown> | undefined => {
  const payload = token.split(".")[1]
  if (payload === undefined) return undefined
  try {
    const bytes = Uint8Array.from(atob(payload.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0))
    const claims: unknown = JSON.parse(new TextDecoder().decode(bytes))
    return typeof claims === "object" && claims !== null ? claims as Record<string, unknown> : undefined
  } catch {
    return undefined
  }
}

/** The session a token opens, or why it cannot. */
export const fromToken = (token: string): Session | string => {
  const trimmed = token.trim().replace(/^Bearer\s+/i, "")
  const claims = claimsOf(trimmed)
  if (claims === undefined || typeof claims.sub !== "string" || typeof claims.exp !== "number") {
    return "This is not an API token of this server: paste the token `arbor auth token` prints."
  }
  if (claims.exp * 1000 <= Date.now()) return "This token has expired: get a fresh one."
  return {
    token: trimmed,
    identity: claims.sub,
    email: typeof claims.email === "string" ? claims.email : undefined,
    expiresAt: claims.exp * 1000
  }
}

/** Keeps `session` for this tab. */
export const save = (session: Session) => sessionStorage.setItem(storageKey, session.token)

/** Forgets the tab's session. */
export const clear = () => sessionStorage.removeItem(storageKey)

/** Sends the tab to the server's sign-in (`/oauth?…`), noting that this tab started it and with which state. */
export const begin = (params: URLSearchParams) => {
  const state = crypto.randomUUID()
  sessionStorage.setItem(pendingKey, JSON.stringify({ state, expiresAt: Date.now() + signInLifetimeMillis }))
  params.set("state", state)
  location.assign(`/oauth?${params}`)
}

/** True when `state` is that of the sign-in this tab started and it has not expired; the tab's note is used up. */
const startedHere = (state: string | null) => {
  const pending = sessionStorage.getItem(pendingKey)
  sessionStorage.removeItem(pendingKey)
  if (pending === null || state === null) return false
  try {
    const started: unknown = JSON.parse(pending)
    return typeof started === "object" && started !== null && "state" in started && "expiresAt" in started &&
      started.state === state && typeof started.expiresAt === "number" && started.expiresAt > Date.now()
  } catch {
    return false
  }
}

/**
 * What a sign-in's return left in the fragment: a session, or the server's refusal. A token in an address this tab
 * did not come back to from its own sign-in (its state, within its lifetime) is ignored: a link carrying someone
 * else's token must not sign a person in as them (login CSRF), even in a tab that started a sign-in and left it.
 */
const fromFragment = (): Session | { readonly error: string } | undefined => {
  const params = new URLSearchParams(location.hash.slice(1))
  const token = params.get("token")
  const error = params.get("error")
  if (token === null && error === null) return undefined
  history.replaceState(null, "", `${location.pathname}${location.search}#/`)
  if (!startedHere(params.get("state"))) return { error: "A sign-in this tab did not start was ignored: sign in here." }
  if (error !== null) return { error }
  const session = fromToken(token!)
  return typeof session === "string" ? { error: session } : session
}

/** The session at start: one a sign-in just handed over, else the tab's (while it is valid); or a sign-in error. */
export const initial = (): Session | { readonly error: string } | undefined => {
  const returned = fromFragment()
  if (returned !== undefined) {
    if ("token" in returned) save(returned)
    return returned
  }
  const kept = sessionStorage.getItem(storageKey)
  if (kept === null) return undefined
  const session = fromToken(kept)
  if (typeof session === "string") {
    clear()
    return undefined
  }
  return session
}
