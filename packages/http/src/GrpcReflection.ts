/**
 * gRPC server reflection (`grpc.reflection.v1`): the names of the served services and the descriptors of the files
 * that declare them, with their dependencies, so that generic tools (grpcurl, grpcui, Postman) can call the server
 * without its protos. Open to every caller: the descriptors are the public protos.
 */
import {
  ErrorResponseSchema,
  ExtensionNumberResponseSchema,
  FileDescriptorResponseSchema,
  ListServiceResponseSchema,
  ServerReflection,
  type ServerReflectionRequest,
  type ServerReflectionResponse,
  ServerReflectionResponseSchema
} from "@arbor/api/proto/grpc/reflection/v1/reflection_pb"
import { create, createRegistry, type DescFile, type DescService, toBinary } from "@bufbuild/protobuf"
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt"
import { Code, type ConnectRouter } from "@connectrpc/connect"

/** Adds the reflection service for `services` (and itself) to `router`. */
export const routes = (services: ReadonlyArray<DescService>) => (router: ConnectRouter) => {
  const served = [...services, ServerReflection]
  const files = new Map<string, DescFile>()
  const collect = (file: DescFile) => {
    if (files.has(file.proto.name)) return
    files.set(file.proto.name, file)
    file.dependencies.forEach(collect)
  }
  served.forEach((s) => collect(s.file))
  const registry = createRegistry(...files.values())

  /** `file` and every file it depends on, each once, `file` first, serialized. */
  const withDependencies = (file: DescFile): Array<Uint8Array> => {
    const seen = new Set<string>()
    const out: Array<Uint8Array> = []
    const add = (f: DescFile) => {
      if (seen.has(f.proto.name)) return
      seen.add(f.proto.name)
      out.push(toBinary(FileDescriptorProtoSchema, f.proto))
      f.dependencies.forEach(add)
    }
    add(file)
    return out
  }

  /** The file that declares `symbol`: a service, method, message, enum or extension, fully qualified. */
  const declaring = (symbol: string): DescFile | undefined => {
    const desc = registry.get(symbol)
    if (desc !== undefined) return desc.file
    const dot = symbol.lastIndexOf(".")
    const service = registry.getService(symbol.slice(0, dot))
    return service?.methods.some((m) => m.name === symbol.slice(dot + 1)) ? service.file : undefined
  }

  const respond = (request: ServerReflectionRequest): ServerReflectionResponse["messageResponse"] => {
    const asked = request.messageRequest
    switch (asked.case) {
      case "listServices":
        return {
          case: "listServicesResponse",
          value: create(ListServiceResponseSchema, { service: served.map((s) => ({ name: s.typeName })) })
        }
      case "fileByFilename":
      case "fileContainingSymbol": {
        const file = asked.case === "fileByFilename" ? files.get(asked.value) : declaring(asked.value)
        return file === undefined
          ? {
            case: "errorResponse",
            value: create(ErrorResponseSchema, { errorCode: Code.NotFound, errorMessage: `${asked.value} is not here` })
          }
          : {
            case: "fileDescriptorResponse",
            value: create(FileDescriptorResponseSchema, { fileDescriptorProto: withDependencies(file) })
          }
      }
      case "allExtensionNumbersOfType":
        return {
          case: "allExtensionNumbersResponse",
          value: create(ExtensionNumberResponseSchema, { baseTypeName: asked.value })
        }
      default:
        return {
          case: "errorResponse",
          value: create(ErrorResponseSchema, { errorCode: Code.NotFound, errorMessage: "no extensions are served" })
        }
    }
  }

  router.service(ServerReflection, {
    async *serverReflectionInfo(requests) {
      for await (const request of requests) {
        yield create(ServerReflectionResponseSchema, {
          validHost: request.host,
          originalRequest: request,
          messageResponse: respond(request)
        })
      }
    }
  })
}
