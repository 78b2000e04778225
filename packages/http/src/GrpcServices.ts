/**
 * The gRPC surface's mapping (docs/api.md §11): every domain's methods (`methods/`), over the engine's services. Each
 * served method of the protos in `@arbor/api/proto` calls the engine operation of its REST twin; the shared parts are
 * in `internal/grpc.ts`. A method no domain maps would answer `UNIMPLEMENTED`; none is (a test calls each).
 */
import type { ConnectRouter } from "@connectrpc/connect"
import * as Effect from "effect/Effect"
import * as EngineServices from "./EngineServices.js"
import type { Runner } from "./internal/grpc.js"
import { domains } from "./methods/index.js"

/** The services served, every method of each. */
export const served = domains.flatMap((domain) => domain.services)

/** The routes of every served service, over the engine. */
export const routes = Effect.map(
  EngineServices.services,
  (engine) => (run: Runner) => (router: ConnectRouter) => {
    for (const domain of domains) domain.grpc(engine, run, router)
  }
)
