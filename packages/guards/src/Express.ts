/**
 * The guard as Express middleware: `requireCapability(guard, "repo.create", (req) => req.params.group)`. An allowed
 * request goes on with the caller in `res.locals.arborPrincipal`; a refused one is answered with the engine's error
 * body (401 or 403).
 */
import type { Request, RequestHandler } from "express"
import * as Guard from "./Guard.js"

/** Middleware that lets through only callers holding `capability` at the group `groupOf` names in the request. */
export const requireCapability = (
  guard: Guard.Guard,
  capability: string,
  groupOf: (request: Request) => string
): RequestHandler => {
  const held = Guard.capability(capability)
  return (request, response, next) => {
    guard.check(request.headers.authorization, held, groupOf(request)).then((decision) => {
      if (decision.allowed) {
        response.locals.arborPrincipal = decision.principal
        return next()
      }
      response.status(decision.refusal.status).set(decision.refusal.headers).json(decision.refusal.body)
    }, next)
  }
}
