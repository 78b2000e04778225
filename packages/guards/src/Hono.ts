/**
 * The guard as Hono middleware: `requireCapability(guard, "repo.create", (c) => c.req.param("group"))`. An allowed
 * request goes on with the caller in `c.get("arborPrincipal")`; a refused one is answered with the engine's error
 * body (401 or 403).
 */
import type { Principal } from "@arbor/core"
import type { Context, MiddlewareHandler } from "hono"
import * as Guard from "./Guard.js"

/** What the middleware sets on the context. */
export interface Variables {
  readonly arborPrincipal: Principal.Principal
}

/** Middleware that lets through only callers holding `capability` at the group `groupOf` names in the request. */
export const requireCapability = (
  guard: Guard.Guard,
  capability: string,
  groupOf: (c: Context) => string
): MiddlewareHandler<{ Variables: Variables }> => {
  const held = Guard.capability(capability)
  return async (c, next) => {
    const decision = await guard.check(c.req.header("authorization"), held, groupOf(c))
    if (!decision.allowed) {
      return new Response(JSON.stringify(decision.refusal.body), {
        status: decision.refusal.status,
        headers: { "content-type": "application/json", ...decision.refusal.headers }
      })
    }
    c.set("arborPrincipal", decision.principal)
    await next()
  }
}
