/**
 * The address of a request's client: the connection's, or, when the server sits behind a trusted proxy that passes
 * it in a header (`ARBOR_CLIENT_ADDRESS_HEADER`, e.g. `x-forwarded-for`), that header's last entry, the address the
 * proxy itself saw. Without the setting such headers are ignored, so a client cannot pick its own address.
 */
import type { HttpServerRequest } from "@effect/platform"
import * as Option from "effect/Option"

/** The client's address of `request`, read from `header` (lowercase) when one is configured. */
export const of = (request: HttpServerRequest.HttpServerRequest, header: string | undefined): string => {
  if (header !== undefined) {
    const last = request.headers[header]?.split(",").at(-1)?.trim()
    if (last !== undefined && last !== "") return last
  }
  return Option.getOrElse(request.remoteAddress, () => "")
}
