/**
 * Every custom method is whole. Each endpoint of the API beyond the resources' standard ones (`@arbor/api/Resources`)
 * has its gRPC twin in the protos (the reference's in CI) or a reason for none, a command of `arbor` that calls it or
 * a reason for none, its path in docs/api.md and a test that calls it; each method of a served service beyond a
 * resource's standard five is some endpoint's twin. Adding a custom method and missing a step fails here. (The server
 * serves each: a group left unserved does not type-check, and `grpcServices.test.ts` calls every method of the
 * protos.)
 */
import { Api } from "@arbor/api/Api"
import * as OAuth from "@arbor/api/OAuth"
import * as Resources from "@arbor/api/Resources"
import { HttpApiGroup, OpenApi } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import protobuf from "protobufjs"
import ts from "typescript"
import { clientProtos, files } from "./grpcSupport.js"

const root = join(import.meta.dirname, "../../..")

/** A reason an endpoint has no twin or no command. */
interface Without {
  readonly without: string
}

const iam = "chainguard.platform.iam.v2beta1"
const authzen = { without: "AuthZEN (OpenID) is HTTP and JSON only; the protos have no decision service" }
const discovery = { without: "a discovery document, read over HTTP by OpenID and JWT libraries" }
const probe = { without: "a probe for load balancers and orchestrators, over plain HTTP" }
const signIn = { without: "a person's sign-in: OAuth 2.0 over HTTP (RFC 6749, 8628, 7009)" }
const elevation = { without: "just-in-time elevation is Arbor's own: the protos have no such service (REST only)" }

/** Each custom endpoint's gRPC twin (`service/Method`), or why it has none. */
const twins: Readonly<Record<string, string | Without>> = {
  "organizations.create": `${iam}.GroupsService/CreateGroup`,
  "verifiedOrganizations.lookup": `${iam}.GroupsService/LookupGroup`,
  "verifiedOrganizations.checkEligibility": `${iam}.GroupsService/CheckEligibility`,
  "verifiedOrganizations.requestAccess": `${iam}.GroupsService/RequestGroupAccess`,
  "terms.accept": `${iam}.TermsService/AcceptTerms`,
  "terms.list": `${iam}.TermsService/ListTermsAcceptances`,
  "identityLookup.lookup": `${iam}.IdentitiesService/LookupIdentity`,
  "ownMetadata.update": `${iam}.IdentitiesService/UpdateIdentityMetadata`,
  "roleBindingBatches.create": `${iam}.RoleBindingsService/BatchCreateRoleBindings`,
  "scimCredentials.generate": `${iam}.IdentityProvidersService/GenerateScimToken`,
  "scimCredentials.regenerate": `${iam}.IdentityProvidersService/RegenerateScimToken`,
  "scimCredentials.revoke": `${iam}.IdentityProvidersService/RevokeScimToken`,
  "scimCredentials.setEnabled": `${iam}.IdentityProvidersService/SetScimEnabled`,
  "mappingBatches.delete": `${iam}.ExternalGroupRoleMappingsService/BatchDeleteExternalGroupRoleMappings`,
  "accountAssociationChecks.check": `${iam}.AccountAssociationsService/CheckAccountAssociation`,
  "inviteCodes.redeem": { without: "the protos' GroupInvitesService has no redeem" },
  "organizationsAsCode.export": { without: "the protos' GroupsService has no export of an organization as a document" },
  "organizationsAsCode.apply": { without: "the protos' GroupsService has no apply of a document" },
  "organizationsAsCode.applyOrganizations": { without: "the protos' GroupsService has no apply of a document" },
  "repoReadmes.get": "chainguard.platform.registry.v2beta1.ReposService/GetRepoReadme",
  "repoReadmes.update": "chainguard.platform.registry.v2beta1.ReposService/UpdateRepoReadme",
  "auditTrail.list": { without: "the protos have no service of the change log" },
  "auditTrail.watch": { without: "the protos have no service of the change log" },
  "decisions.evaluate": authzen,
  "decisions.evaluateMany": authzen,
  "decisions.searchActions": authzen,
  "decisions.searchSubjects": authzen,
  "decisions.searchResources": authzen,
  "decisionsMetadata.configuration": authzen,
  "decisionsMetadata.organizationConfiguration": authzen,
  "organizationDecisions.evaluate": authzen,
  "organizationDecisions.evaluateMany": authzen,
  "organizationDecisions.searchActions": authzen,
  "organizationDecisions.searchSubjects": authzen,
  "organizationDecisions.searchResources": authzen,
  "eligibilities.list": elevation,
  "eligibilities.get": elevation,
  "eligibilities.create": elevation,
  "eligibilities.delete": elevation,
  "elevations.list": elevation,
  "elevations.get": elevation,
  "elevations.create": elevation,
  "elevations.approve": elevation,
  "elevations.deny": elevation,
  "decisionVocabularies.get": { without: "the protos have no decision service, so nothing of its vocabulary" },
  "decisionVocabularies.set": { without: "the protos have no decision service, so nothing of its vocabulary" },
  "sts.exchange": "chainguard.platform.oidc.SecurityTokenService/Exchange",
  "sts.exchangePost": "chainguard.platform.oidc.SecurityTokenService/Exchange",
  "sts.exchangeRefreshToken": "chainguard.platform.oidc.SecurityTokenService/ExchangeRefreshToken",
  "sts.configuration": discovery,
  "sts.authorizationServer": discovery,
  "sts.jwks": discovery,
  "health.live": probe,
  "health.ready": probe,
  "signIn.browser": signIn,
  "signIn.deviceAuthorization": signIn,
  "signIn.token": signIn,
  "signIn.revoke": signIn
}

/** Custom endpoints no command of `arbor` calls, and why. */
const notOnTheCommandLine: Readonly<Record<string, string>> = {
  "eligibilities.get": "arbor iam eligibilities list shows each whole",
  "elevations.get": "arbor iam approvals list shows each whole; arbor iam elevate prints the one it asked for",
  "decisions.evaluateMany": "batches of decisions are for services; arbor iam check asks one",
  "decisions.searchSubjects": "searches are for services; arbor iam check asks one decision",
  "decisions.searchResources": "searches are for services; arbor iam check asks one decision",
  "decisionsMetadata.configuration": discovery.without,
  "decisionsMetadata.organizationConfiguration": discovery.without,
  "organizationDecisions.evaluate":
    "an application's enforcement point asks in its own words; arbor iam check in Arbor's",
  "organizationDecisions.evaluateMany": "batches of decisions are for services; arbor iam check asks one",
  "organizationDecisions.searchActions": "searches are for services; arbor iam check asks one decision",
  "organizationDecisions.searchSubjects": "searches are for services; arbor iam check asks one decision",
  "organizationDecisions.searchResources": "searches are for services; arbor iam check asks one decision",
  "sts.exchangePost": "the same exchange as GET, which arbor uses",
  "sts.configuration": discovery.without,
  "sts.authorizationServer": discovery.without,
  "sts.jwks": discovery.without,
  "health.live": probe.without,
  "health.ready": probe.without
}

/** The groups of the resources' standard methods. */
const standard = new Set<string>(
  Object.values(Resources).flatMap((value) =>
    typeof value === "object" && value !== null && "group" in value && HttpApiGroup.isHttpApiGroup(value.group)
      ? [value.group.identifier]
      : []
  )
)

/** Every custom endpoint, `group.endpoint`, with its path as the OpenAPI document has it. */
const custom = Object.entries(OpenApi.fromApi(Api).paths).flatMap(([path, item]) =>
  Object.values(item).flatMap((operation) => {
    const id: unknown = typeof operation === "object" && operation !== null && "operationId" in operation
      ? operation.operationId
      : undefined
    return typeof id === "string" && !standard.has(id.split(".")[0]!) ? [{ id, path }] : []
  })
)

/**
 * A source's code as the compiler parses it, its tokens run together without the comments between them: a comment
 * that names an endpoint (`// TODO: a test of :touch`) is no call of it.
 */
const codeOf = (file: string, text: string): string => {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const tokens: Array<string> = []
  const visit = (node: ts.Node): void => {
    const children = node.getChildren(source)
    if (children.length === 0) tokens.push(node.getText(source))
    else children.forEach(visit)
  }
  visit(source)
  return tokens.join("")
}

/** The code of every TypeScript source below `folder`, comments left out (`codeOf`). */
const sources = (folder: string): string =>
  readdirSync(join(root, folder), { recursive: true, encoding: "utf8" })
    .filter((file) => /\.tsx?$/.test(file))
    .map((file) => codeOf(file, readFileSync(join(root, folder, file), "utf8")))
    .join("\n")

/**
 * How a text may name an endpoint: its path (a uid in it as `<…>` or any segment), its custom method (`:verb`), a
 * typed client's call (`.group.endpoint(`), or the sign-in paths' names (`OAuth.paths.token`).
 */
const named = ({ id, path }: { readonly id: string; readonly path: string }) => {
  const alternatives = [
    path.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{uid\}/g, "(?:<[^>]+>|[^/\\s]+)"),
    `\\.${id.replace(".", "\\.")}\\(`,
    ...(/:[A-Za-z]+$/.exec(path) ?? []).map((verb) => `${verb}\\b`),
    ...Object.entries(OAuth.paths).flatMap(([name, value]) => value === path ? [`paths\\.${name}\\b`] : [])
  ]
  return new RegExp(alternatives.join("|"))
}

describe("custom methods", () => {
  it("walks every custom endpoint, and names only endpoints of the API", () => {
    assert.isAtLeast(custom.length, 30)
    const ids = new Set(custom.map(({ id }) => id))
    assert.deepStrictEqual([...ids].filter((id) => twins[id] === undefined).join(", "), "")
    assert.deepStrictEqual(Object.keys({ ...twins, ...notOnTheCommandLine }).filter((id) => !ids.has(id)), [])
  })

  it("reads code, not comments: a comment naming an endpoint does not count as calling it", () => {
    const touch = { id: "groups.touch", path: "/iam/v2beta1/groups/{uid}:touch" }
    assert.isFalse(named(touch).test(codeOf("a.test.ts", "// TODO: a test of :touch\n/* client.groups.touch( */\n")))
    assert.isTrue(named(touch).test(codeOf("a.test.ts", "await client.groups.touch({ path: { uid } }) // :touch\n")))
    assert.isTrue(named(touch).test(codeOf("a.test.ts", "await call(`/iam/v2beta1/groups/${uid}:touch`)\n")))
  })

  it("each is called by a command of arbor, named in docs/api.md, and called by a test", () => {
    const cli = sources("packages/cli/src")
    const docs = readFileSync(join(root, "docs/api.md"), "utf8")
    const tests = [sources("packages/http/test"), sources("packages/cli/test"), sources("packages/core/test")].join(
      "\n"
    )
    const missing: Array<string> = []
    for (const endpoint of custom) {
      const pattern = named(endpoint)
      if (notOnTheCommandLine[endpoint.id] === undefined && !pattern.test(cli)) missing.push(`arbor: ${endpoint.id}`)
      if (!pattern.test(docs)) missing.push(`docs/api.md: ${endpoint.path}`)
      if (!pattern.test(tests)) missing.push(`tests: ${endpoint.id}`)
    }
    assert.deepStrictEqual(missing.join("\n"), "")
  })

  it("each has its gRPC twin, and each custom gRPC method is a twin", () => {
    const protos = new protobuf.Root()
    protos.resolvePath = (_origin, target) => (target.startsWith("/") ? target : join(clientProtos, target))
    protos.loadSync(files.map((file) => join(clientProtos, file)))
    protos.resolveAll()
    const declared = new Set(Object.values(twins).filter((twin) => typeof twin === "string"))
    const missing: Array<string> = []
    for (const twin of declared) {
      const [service, method] = twin.split("/")
      if (protos.lookupService(service!).methods[method!] === undefined) missing.push(`no such method: ${twin}`)
    }
    // A resource's standard methods come from its declaration: `Get`, `Create`, `Update` and `Delete` of its message
    // and its service's `List`. Every other method of a served service is some endpoint's twin.
    const resources = Object.values(Resources).flatMap((value) =>
      typeof value === "object" && value !== null && "proto" in value && typeof value.proto === "object" &&
        value.proto !== null && "service" in value.proto && "message" in value.proto
        ? [{ service: String(value.proto.service), message: String(value.proto.message).split(".").at(-1)! }]
        : []
    )
    const isStandard = (service: string, method: string) =>
      resources.some((resource) =>
        resource.service === service &&
        (method.startsWith("List") ||
          ["Get", "Create", "Update", "Delete"].some((verb) => method === verb + resource.message))
      )
    const walk = (namespace: protobuf.NamespaceBase): Array<protobuf.Service> =>
      namespace.nestedArray.flatMap((nested) =>
        nested instanceof protobuf.Service
          ? [nested]
          : nested instanceof protobuf.Namespace
          ? walk(nested)
          : []
      )
    const served = walk(protos)
    assert.isAtLeast(served.length, 14)
    for (const service of served) {
      const name = service.fullName.slice(1)
      for (const method of Object.keys(service.methods)) {
        if (!isStandard(name, method) && !declared.has(`${name}/${method}`)) {
          missing.push(`no endpoint: ${name}/${method}`)
        }
      }
    }
    assert.deepStrictEqual(missing.join("\n"), "")
  })
})
