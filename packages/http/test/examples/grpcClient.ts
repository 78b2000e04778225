import { GroupsService } from "@arbor/api/proto/chainguard/platform/iam/v2beta1/groups_pb"
import { createClient } from "@connectrpc/connect"
import { createGrpcTransport } from "@connectrpc/connect-node"

/** The names of the folders in `org`, over gRPC, as the holder of `token`. */
export const folderNames = async (baseUrl: string, token: string, org: string) => {
  const groups = createClient(
    GroupsService,
    createGrpcTransport({
      baseUrl,
      interceptors: [(next) => (request) => {
        request.header.set("authorization", `Bearer ${token}`)
        return next(request)
      }]
    })
  )
  const page = await groups.listGroups({ uidp: { childrenOf: org } })
  return page.groups.map((group) => group.name)
}
