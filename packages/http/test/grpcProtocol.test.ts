/**
 * gRPC as a protocol: the registry's resources, errors with their decoded details, authentication, page walks
 * across both surfaces, the token exchange and server reflection.
 */
import { Advisories, Groups, Identities, Principal, RefreshTokens, TokenIssuer } from "@arbor/core"
import { assert, describe, it } from "@effect/vitest"
import * as grpc from "@grpc/grpc-js"
import * as protoLoader from "@grpc/proto-loader"
import * as Effect from "effect/Effect"
import * as http2 from "node:http2"
import { join } from "node:path"
import { gzipSync } from "node:zlib"
import protobuf from "protobufjs"
import descriptor from "protobufjs/ext/descriptor/index.js"
import {
  clients,
  iam,
  oidc,
  owner,
  registry,
  rest,
  restFailure,
  server,
  stranger,
  useGrpcServer
} from "./grpcServer.js"
import { clientProtosNamed, comparable, failure, without } from "./grpcSupport.js"
import { tokenFor } from "./support.js"

describe(
  `gRPC, by an independent client on ${clientProtosNamed}: errors, pages, tokens, reflection`,
  () => {
    useGrpcServer()

    it("serves repos, tags and advisories as REST answers them", async () => {
      const repos = clients.service(`${registry}.ReposService`)
      const tags = clients.service(`${registry}.TagsService`)
      const advisories = clients.service("chainguard.platform.vulnerabilities.v2beta1.AdvisoriesService")
      const { token } = owner
      const repo = await repos.CreateRepo(
        { parent: owner.org, repo: { name: "nginx", catalogTier: "CATALOG_TIER_APPLICATION", aliases: ["web"] } },
        token
      )
      assert.strictEqual(repo.catalogTier, "CATALOG_TIER_APPLICATION")
      const restRepo = await rest("GET", `/registry/v2beta1/repos/${repo.uid}`, token)
      assert.deepStrictEqual(
        comparable(repo),
        comparable({ ...restRepo.body, catalogTier: `CATALOG_TIER_${restRepo.body.catalogTier}` })
      )
      const updated = await repos.UpdateRepo({ repo: { uid: repo.uid, description: "web server" } }, token)
      assert.strictEqual(updated.description, "web server")
      assert.strictEqual((await repos.GetRepo({ uid: repo.uid }, token)).description, "web server")
      const repoList = await repos.ListRepos({ uidp: { childrenOf: owner.org } }, token)
      assert.deepStrictEqual(repoList.repos.map((r: { uid: string }) => r.uid), [repo.uid])

      const tag = await tags.CreateTag(
        { parent: repo.uid, tag: { name: "1.27", digest: `sha256:${"a".repeat(64)}` } },
        token
      )
      const restTag = await rest("GET", `/registry/v2beta1/tags/${tag.uid}`, token)
      assert.deepStrictEqual(comparable(tag), comparable(without(restTag.body, "createTime")))
      assert.deepStrictEqual(comparable(await tags.GetTag({ uid: tag.uid }, token)), comparable(tag))
      const byDigest = await tags.ListTags(
        { uidp: { childrenOf: repo.uid }, digest: `sha256:${"a".repeat(64)}` },
        token
      )
      assert.deepStrictEqual(byDigest.tags.map((t: { name: string }) => t.name), ["1.27"])
      const since = await tags.ListTags(
        { uidp: { childrenOf: repo.uid }, updatedSince: { seconds: "4102444800" } },
        token
      )
      assert.strictEqual(since.tags, undefined)
      // The views a list of tags may ask for change nothing: every answer holds them.
      const viewed = await tags.ListTags({ uidp: { childrenOf: repo.uid }, includeDates: true }, token)
      assert.deepStrictEqual(viewed.tags.map((t: { name: string }) => t.name), ["1.27"])

      await server.runtime.runPromise(
        Effect.gen(function*() {
          const org = yield* (yield* Groups.Groups).get(Principal.system, owner.org)
          yield* (yield* Advisories.Advisories).importDocuments(Principal.system, org.uid, [{
            source: "nginx.advisories.yaml",
            text: "schema-version: 2.0.2\npackage:\n  name: nginx\nadvisories:\n  - id: CGA-2222-3333-4444\n" +
              "    aliases: [CVE-2024-0001]\n    events:\n" +
              "      - timestamp: 2024-01-01T00:00:00Z\n        type: detection\n        data:\n          type: manual\n" +
              "      - timestamp: 2024-02-01T00:00:00Z\n        type: fixed\n        data:\n          fixed-version: 1.27.1-r0\n" +
              "  - id: CGA-2222-3333-5555\n    aliases: [CVE-2024-0002]\n    events:\n" +
              "      - timestamp: 2024-03-01T00:00:00Z\n        type: detection\n        data:\n          type: scan/v1\n" +
              "          data:\n            subpackageName: nginx-doc\n            componentID: c1\n" +
              "            componentName: zlib\n            componentVersion: 1.2.13\n            scanner: grype\n" +
              "      - timestamp: 2024-03-02T00:00:00Z\n        type: false-positive-determination\n        data:\n" +
              "          type: vulnerable-code-not-in-execution-path\n          note: never called\n"
          }])
        }).pipe(Effect.orDie)
      )
      const found = await advisories.ListAdvisories(
        { artifactNames: ["nginx"], eventTypes: ["EVENT_TYPE_FILTER_FIXED"] },
        token
      )
      const restFound = await rest(
        "GET",
        "/vulnerabilities/v2beta1/advisories?package_names=nginx&event_types=fixed",
        token
      )
      assert.deepStrictEqual(
        found.advisories.map((a: { uid: string }) => a.uid),
        restFound.body.advisories.map((a: { uid: string }) => a.uid)
      )
      const advisory = await advisories.GetAdvisory({ uid: found.advisories[0].uid }, token)
      const twin = restFound.body.advisories[0]
      assert.strictEqual(advisory.advisoryId, "CGA-2222-3333-4444")
      assert.strictEqual(advisory.artifactName, twin.packageName)
      assert.deepStrictEqual(advisory.aliases, twin.aliases)
      assert.deepStrictEqual(
        advisory.events.map((e: { createTime: unknown }) => comparable(e.createTime)),
        twin.events.map((e: { time: string }) => e.time)
      )
      assert.deepStrictEqual(advisory.events[0].detection, { manual: {} })
      assert.deepStrictEqual(advisory.events[1].fixed, { fixedVersion: "1.27.1-r0" })
      const determined = await advisories.ListAdvisories(
        { latestEventType: "EVENT_TYPE_FILTER_FALSE_POSITIVE_DETERMINATION" },
        token
      )
      assert.strictEqual(determined.totalCount, "1")
      const [scanned, falsePositive] = determined.advisories[0].events
      assert.deepStrictEqual(scanned.detection, {
        scanv1: {
          scanner: "grype",
          subpackage: "nginx-doc",
          componentId: "c1",
          component: "zlib",
          componentVersion: "1.2.13"
        }
      })
      assert.deepStrictEqual(falsePositive.falsePositiveDetermination, {
        type: "TYPE_VULNERABLE_CODE_NOT_IN_EXECUTION_PATH",
        note: "never called"
      })
      const none = await advisories.ListAdvisories({ latestEventType: "EVENT_TYPE_FILTER_PENDING_UPSTREAM_FIX" }, token)
      assert.strictEqual(none.totalCount, "0")

      await tags.DeleteTag({ uid: tag.uid }, token)
      await repos.DeleteRepo({ uid: repo.uid }, token)
      assert.strictEqual((await rest("GET", `/registry/v2beta1/repos/${repo.uid}`, token)).status, 404)
    })

    it("fails with the REST body's code, message and details", async () => {
      const groups = clients.service(`${iam}.GroupsService`)
      const identities = clients.service(`${iam}.IdentitiesService`)
      const missing = `${owner.org}/0123456789abcdef`
      const notFound = await failure(groups.GetGroup({ uid: missing }, owner.token))
      assert.strictEqual(notFound.code, 5)
      assert.deepStrictEqual(
        comparable(notFound),
        comparable(await restFailure("GET", `/iam/v2beta1/groups/${missing}`, owner.token))
      )

      const invalid = await failure(
        groups.CreateGroup({ parent: owner.org, group: { name: "x".repeat(100) } }, owner.token)
      )
      assert.strictEqual(invalid.code, 3)
      assert.deepStrictEqual(
        comparable(invalid),
        comparable(
          await restFailure("POST", `/iam/v2beta1/groups/${owner.org}`, owner.token, { name: "x".repeat(100) })
        )
      )
      assert.strictEqual(
        invalid.details.find((d) => String(d["@type"]).endsWith("BadRequest"))?.["@type"],
        "type.googleapis.com/google.rpc.BadRequest"
      )

      const denied = await failure(groups.GetGroup({ uid: owner.org }, stranger.token))
      assert.deepStrictEqual(
        comparable(denied),
        comparable(await restFailure("GET", `/iam/v2beta1/groups/${owner.org}`, stranger.token))
      )

      // Fields the engine has no feature for
      const aws = await failure(identities.CreateIdentity(
        {
          parent: owner.org,
          identity: { name: "aws", awsIdentity: { awsAccount: "123456789012", arn: "arn:aws:iam::1:role/x" } }
        },
        owner.token
      ))
      assert.strictEqual(aws.code, 3)
      assert.match(JSON.stringify(aws.details), /identity\.awsIdentity/)
      const principal = await failure(identities.CreateIdentity(
        { parent: owner.org, identity: { name: "svc", servicePrincipal: "SERVICE_PRINCIPAL_INGESTER" } },
        owner.token
      ))
      assert.strictEqual(principal.code, 3)
      // Values proto3 allows that the engine does not
      const tags = clients.service(`${registry}.TagsService`)
      for (
        const bad of [
          groups.ListGroups({ pageSize: -1 }, owner.token),
          groups.ListGroups({ skip: -1 }, owner.token),
          tags.ListTags({ updatedSince: { seconds: "999999999999" } }, owner.token),
          clients.service(`${iam}.GroupInvitesService`).CreateGroupInvite(
            { parent: owner.org, groupInvite: { roleUid: owner.org, expirationTime: { seconds: "999999999999" } } },
            owner.token
          )
        ]
      ) {
        assert.strictEqual((await failure(bad)).code, 3)
      }
      const filtered = await failure(
        clients.service(`${iam}.RoleBindingsService`).ListRoleBindings({ identity: "alice" }, owner.token)
      )
      assert.strictEqual(filtered.code, 3)
      assert.match(JSON.stringify(filtered.details), /"field":"identity"/)
    })

    it("answers UNAUTHENTICATED without a valid bearer, as REST does", async () => {
      const groups = clients.service(`${iam}.GroupsService`)
      const restNone: any = await fetch(`${server.url}/iam/v2beta1/groups`).then((r) => r.json())
      for (
        const token of [undefined, "", "not-a-token", await server.runtime.runPromise(tokenFor(owner.identity)) + "x"]
      ) {
        const refused = await failure(groups.ListGroups({}, token))
        assert.strictEqual(refused.code, 16, String(token))
        if (token === undefined) {
          assert.deepStrictEqual(
            comparable(refused),
            comparable({ code: restNone.code, message: restNone.message, details: restNone.details })
          )
        }
      }
    })

    it("walks pages with order_by and skip, a page token from either surface continuing on the other", async () => {
      const groups = clients.service(`${iam}.GroupsService`)
      const { token } = owner
      const parent = await groups.CreateGroup({ parent: owner.org, group: { name: "pages" } }, token)
      const names = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf"]
      for (const name of names) await groups.CreateGroup({ parent: parent.uid, group: { name } }, token)
      const byName = (items: ReadonlyArray<{ name: string }> | undefined) => (items ?? []).map((g) => g.name)

      const first = await groups.ListGroups(
        { uidp: { childrenOf: parent.uid }, pageSize: 3, orderBy: "name desc" },
        token
      )
      assert.deepStrictEqual(byName(first.groups), ["golf", "foxtrot", "echo"])
      assert.strictEqual(first.totalCount, "7")
      const second = await rest(
        "GET",
        `/iam/v2beta1/groups?uidp.children_of=${parent.uid}&page_size=3&order_by=name%20desc&page_token=${
          encodeURIComponent(first.nextPageToken)
        }`,
        token
      )
      assert.deepStrictEqual(byName(second.body.groups), ["delta", "charlie", "bravo"])
      const third = await groups.ListGroups(
        { uidp: { childrenOf: parent.uid }, pageSize: 3, orderBy: "name desc", pageToken: second.body.nextPageToken },
        token
      )
      assert.deepStrictEqual(byName(third.groups), ["alpha"])
      assert.strictEqual(third.nextPageToken, undefined)

      const skipped = await groups.ListGroups(
        { uidp: { childrenOf: parent.uid }, pageSize: 2, orderBy: "name", skip: 4 },
        token
      )
      const restSkipped = await rest(
        "GET",
        `/iam/v2beta1/groups?uidp.children_of=${parent.uid}&page_size=2&order_by=name&skip=4`,
        token
      )
      assert.deepStrictEqual(byName(skipped.groups), ["echo", "foxtrot"])
      assert.deepStrictEqual(byName(restSkipped.body.groups), byName(skipped.groups))
      assert.strictEqual(skipped.skipped, restSkipped.body.skipped)

      const changedOrder = await failure(groups.ListGroups(
        { uidp: { childrenOf: parent.uid }, pageSize: 3, orderBy: "name asc", pageToken: first.nextPageToken },
        token
      ))
      assert.strictEqual(changedOrder.code, 3)
    })

    it("exchanges tokens through SecurityTokenService as /sts does", async () => {
      const sts = clients.service("chainguard.platform.oidc.SecurityTokenService")
      const workload = await server.runtime.runPromise(
        Effect.gen(function*() {
          return yield* (yield* Identities.Identities).create(Principal.system, owner.org, {
            name: "ci",
            claimMatch: { issuer: oidc.issuer.url!, subject: "repo:acme/app" }
          })
        }).pipe(Effect.orDie)
      )
      const upstream = await oidc.issuer.buildToken({
        scopesOrTransform: (_, payload) => Object.assign(payload, { sub: "repo:acme/app", aud: server.url })
      })
      const exchanged = await sts.Exchange({ aud: [server.url], identity: workload.uid }, upstream)
      assert.match(exchanged.token, /^ey/)
      assert.ok(Number(exchanged.expiry.seconds) > Date.now() / 1000)
      const verified = await server.runtime.runPromise(
        Effect.flatMap(TokenIssuer.TokenIssuer, (issuer) => issuer.verify(exchanged.token))
      )
      assert.strictEqual(verified.identity, workload.uid)
      const refused = await failure(sts.Exchange({ aud: [server.url], identity: workload.uid }, "not-a-token"))
      const restRefused = await restFailure(
        "POST",
        `/sts/exchange?aud=${encodeURIComponent(server.url)}&identity=${workload.uid}`,
        "not-a-token"
      )
      assert.deepStrictEqual(comparable(refused), comparable(restRefused))
      // An unknown capability is named; a narrowed exchange carries its narrowing, as REST's does.
      const unknownCap = await failure(
        sts.Exchange({ aud: [server.url], identity: workload.uid, cap: ["x"] }, upstream)
      )
      assert.strictEqual(unknownCap.code, 3)
      assert.match(JSON.stringify(unknownCap.details), /"field":"cap"/)
      const narrowed = await sts.Exchange(
        { aud: [server.url], identity: workload.uid, cap: ["CAP_IAM_GROUPS_LIST"], scopes: [owner.org] },
        await oidc.issuer.buildToken({
          scopesOrTransform: (_, payload) => Object.assign(payload, { sub: "repo:acme/app", aud: server.url })
        })
      )
      const narrowedClaims = JSON.parse(Buffer.from(narrowed.token.split(".")[1]!, "base64url").toString())
      assert.deepStrictEqual([narrowedClaims.cap, narrowedClaims.scopes], [["groups.list"], [owner.org]])

      const refresh = await server.runtime.runPromise(
        Effect.flatMap(RefreshTokens.RefreshTokens, (tokens) => tokens.issue(owner.identity as never, server.url))
      )
      const pair = await sts.ExchangeRefreshToken(
        { aud: [server.url], cap: ["groups.list"], scopes: [owner.org] },
        refresh.token
      )
      assert.match(pair.token.token, /^ey/)
      const refreshedClaims = JSON.parse(Buffer.from(pair.token.token.split(".")[1]!, "base64url").toString())
      assert.deepStrictEqual([refreshedClaims.cap, refreshedClaims.scopes], [["groups.list"], [owner.org]])
      assert.notStrictEqual(pair.refreshToken.token, refresh.token)
      // Reuse revokes the family: REST then finds the same token revoked.
      const reused = await failure(sts.ExchangeRefreshToken({ aud: [server.url] }, refresh.token))
      const restReused = await restFailure("POST", "/sts/exchange_refresh_token", refresh.token)
      assert.deepStrictEqual([reused.code, reused.message], [restReused.code, restReused.message])
      assert.strictEqual((await failure(sts.ExchangeRefreshToken({}, pair.refreshToken.token))).code, 16)
    })

    it("describes itself through server reflection, enough for a generic tool to call it", async () => {
      const definition = protoLoader.loadSync("grpc/reflection/v1/reflection.proto", {
        includeDirs: [join(import.meta.dirname, "..", "..", "api", "proto")]
      })
      const Reflection = (grpc.loadPackageDefinition(definition) as any).grpc.reflection.v1.ServerReflection
      const reflection = new Reflection(`127.0.0.1:${new URL(server.url).port}`, grpc.credentials.createInsecure())
      const stream = reflection.ServerReflectionInfo()
      const ask = (request: object) =>
        new Promise<any>((resolve) => {
          stream.once("data", resolve)
          stream.write(request)
        })
      const services = (await ask({ listServices: "" })).listServicesResponse.service.map((s: { name: string }) =>
        s.name
      )
      assert.includeMembers(services, [
        `${iam}.GroupsService`,
        "chainguard.platform.oidc.SecurityTokenService",
        "grpc.reflection.v1.ServerReflection"
      ])
      const files =
        (await ask({ fileContainingSymbol: `${iam}.GroupsService` })).fileDescriptorResponse.fileDescriptorProto
      const unknown = await ask({ fileContainingSymbol: "nowhere.Service" })
      assert.strictEqual(unknown.errorResponse.errorCode, 5)
      stream.end()
      reflection.close()

      // What a generic tool does next: build the types from the descriptors alone, and call.
      // ext/descriptor adds Root.fromDescriptor at run time; its typings do not say so.
      const root: protobuf.Root = (protobuf.Root as any).fromDescriptor(
        descriptor.FileDescriptorSet.create({
          file: files.map((bytes: Buffer) => descriptor.FileDescriptorProto.decode(bytes))
        })
      )
      const Request = root.lookupType(`${iam}.ListGroupsRequest`)
      const Response = root.lookupType(`${iam}.ListGroupsResponse`)
      const generic = new grpc.Client(`127.0.0.1:${new URL(server.url).port}`, grpc.credentials.createInsecure())
      const metadata = new grpc.Metadata()
      metadata.set("authorization", `Bearer ${owner.token}`)
      const answer = await new Promise<any>((resolve, reject) =>
        generic.makeUnaryRequest(
          `/${iam}.GroupsService/ListGroups`,
          (request: object) => Buffer.from(Request.encode(Request.fromObject(request)).finish()),
          (bytes: Buffer) => Response.toObject(Response.decode(bytes), { longs: String }),
          { uidp: { inRoot: true } },
          metadata,
          (error, value) => (error === null ? resolve(value) : reject(error))
        )
      )
      generic.close()
      assert.include(answer.groups.map((g: { name: string }) => g.name), "acme")
    })

    it(
      "refuses messages over 1 MiB, compressed or not, and ends their streams at once",
      { timeout: 20_000 },
      async () => {
        const groups = clients.service(`${iam}.GroupsService`)
        const big = await failure(groups.ListGroups({ name: "x".repeat(2 * 1024 * 1024) }, owner.token))
        assert.strictEqual(big.code, 8)
        assert.match(big.message, /larger than configured readMaxBytes 1048576/)

        /** A raw gRPC call of one frame: its trailers, and how long until the stream closed. */
        const raw = (frame: Buffer, headers: Record<string, string> = {}) =>
          new Promise<{ trailers: Record<string, unknown>; millis: number }>((resolve, reject) => {
            const started = Date.now()
            const session = http2.connect(server.url)
            session.on("error", reject)
            const stream = session.request({
              ":method": "POST",
              ":path": `/${iam}.GroupsService/ListGroups`,
              "content-type": "application/grpc",
              te: "trailers",
              authorization: `Bearer ${owner.token}`,
              ...headers
            })
            let trailers: Record<string, unknown> = {}
            stream.on("trailers", (t) => (trailers = t))
            stream.on("response", (h) => (trailers = { ...h, ...trailers }))
            stream.on("error", () => undefined)
            stream.resume()
            stream.once("close", () => {
              resolve({ trailers, millis: Date.now() - started })
              session.close()
            })
            stream.end(frame)
          })
        const framed = (payload: Buffer, compressed: 0 | 1) => {
          const frame = Buffer.alloc(5 + payload.length)
          frame[0] = compressed
          frame.writeUInt32BE(payload.length, 1)
          payload.copy(frame, 5)
          return frame
        }
        // 4 MiB sent, most of it never read: the answer comes, and the stream ends without waiting for the rest.
        const unread = await raw(framed(Buffer.alloc(4 * 1024 * 1024, 0x41), 0))
        assert.strictEqual(unread.trailers["grpc-status"], "8")
        assert.isBelow(unread.millis, 5_000)
        // 64 KiB of gzip that would inflate to 64 MiB.
        const bomb = await raw(framed(gzipSync(Buffer.alloc(64 * 1024 * 1024)), 1), { "grpc-encoding": "gzip" })
        assert.strictEqual(bomb.trailers["grpc-status"], "8")
        assert.match(String(bomb.trailers["grpc-message"]), /after decompression/)
      }
    )
  }
)
