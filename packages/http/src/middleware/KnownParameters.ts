/**
 * `KnownParameters` (`@arbor/api`): a query parameter the method does not take is 400 INVALID_ARGUMENT naming it,
 * before anything is done, whatever the method (a DELETE's `?validate_only=true` as a list's misspelt filter).
 */
import { Api } from "@arbor/api/Api"
import * as ListQuery from "@arbor/api/ListQuery"
import { KnownParameters } from "@arbor/api/Security"
import { Errors } from "@arbor/core"
import { HttpRouter, HttpServerRequest } from "@effect/platform"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** The parameters each route takes, from the API's declaration. */
const declared = ListQuery.declaredParameters(Api)

export const layer = Layer.succeed(
  KnownParameters,
  Effect.flatMap(
    Effect.all([HttpRouter.RouteContext, HttpServerRequest.ParsedSearchParams]),
    ([{ route }, params]) => {
      const takes = declared.get(`${route.method} ${route.path}`)
      const [first, ...rest] = takes === undefined ? [] : Object.keys(params).filter((name) => !takes.has(name)).map((
        field
      ) => new Errors.FieldViolation({ field, description: "is not a parameter of this method" }))
      return first === undefined
        ? Effect.void
        : Effect.fail(new Errors.InvalidArgument({ violations: [first, ...rest] }))
    }
  )
)
