/**
 * Outbound HTTP to hosts that callers name (issuers' documents, webhook sinks), safe against server-side request
 * forgery: every address a host resolves to must be public, the socket connects to the checked addresses only, and
 * redirects are never followed (`internal/egress.ts`). `make(resolve, allowLoopback, { keepAlive })` is an
 * HttpClient; `makeSender` sends requests whose answers matter only by status.
 */
export { make, makeSender, Resolver, unreachable } from "./internal/egress.js"
export type { Options, Resolve } from "./internal/egress.js"
