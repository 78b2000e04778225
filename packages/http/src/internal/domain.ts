/**
 * A domain's two surfaces, served together: its REST handlers (the HttpApi groups `@arbor/api` declares in its module
 * of the same name under `methods/`) and its gRPC methods, each over the engine's services. The server registers every
 * domain from one list (`methods/index.ts`).
 */
import type { DescService } from "@bufbuild/protobuf"
import type { ConnectRouter } from "@connectrpc/connect"
import type * as Layer from "effect/Layer"
import type * as EngineServices from "../EngineServices.js"
import type { Runner } from "./grpc.js"

export interface Domain<Groups, R> {
  /** Its REST handlers: a layer of each HttpApi group it serves. */
  readonly rest: (engine: EngineServices.Services) => Layer.Layer<Groups, never, R>
  /** The gRPC services it serves, every method of each (a method it maps to nothing answers `UNIMPLEMENTED`). */
  readonly services: ReadonlyArray<DescService>
  /** Registers its gRPC methods: a domain's custom methods first, then its resources' standard ones. */
  readonly grpc: (engine: EngineServices.Services, run: Runner, router: ConnectRouter) => void
}

/** A domain, its group names and what its handlers need (the API's security middleware) inferred. */
export const make = <Groups, R>(domain: Domain<Groups, R>): Domain<Groups, R> => domain
