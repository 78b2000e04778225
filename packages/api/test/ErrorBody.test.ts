import * as ErrorBody from "@arbor/api/ErrorBody"
import { Errors } from "@arbor/core"
import { assert, describe, it } from "@effect/vitest"
import * as Schema from "effect/Schema"

const samples: ReadonlyArray<Errors.ArborError> = [
  new Errors.InvalidArgument({
    violations: [
      new Errors.FieldViolation({ field: "name", description: "must match" }),
      new Errors.FieldViolation({ field: "claimMatch.issuer", description: "is required" })
    ]
  }),
  new Errors.InvalidArgument({
    violations: [new Errors.FieldViolation({ field: "body", description: "too big" })],
    reason: "REQUEST_TOO_LARGE"
  }),
  new Errors.NotFound({ resourceType: "group", uid: "a".repeat(40) }),
  new Errors.Unavailable({ description: "the sign-in provider cannot be reached", reason: "PROVIDER_UNAVAILABLE" }),
  new Errors.AlreadyExists({ resourceType: "role", description: "a role named x exists in this group" }),
  new Errors.PermissionDenied({ capability: "groups.list", resource: "b".repeat(40) }),
  new Errors.Unauthenticated({ why: "the token has expired", reason: "TOKEN_EXPIRED" }),
  new Errors.FailedPrecondition({
    summary: "cannot delete group with child groups",
    violations: [new Errors.PreconditionViolation({ type: "RESOURCE_NOT_EMPTY", subject: "g", description: "d" })]
  }),
  new Errors.Aborted({ description: "a concurrent write won" }),
  new Errors.Internal({ reason: "STORE_UNAVAILABLE" })
]

describe("ErrorBody", () => {
  it("parses every rendered engine error back into the same error", () => {
    for (const error of samples) {
      const rendered = ErrorBody.render(error, "iam.example")
      assert.deepStrictEqual(ErrorBody.parse(rendered.body), error, error._tag)
    }
  })

  it("declares each error as a codec of its body, both ways", () => {
    for (const error of samples) {
      const codec = ErrorBody.schema(Schema.typeSchema(Errors.ArborError))
      assert.deepStrictEqual(Schema.decodeSync(codec)(Schema.encodeSync(codec)(error)), error, error._tag)
    }
  })

  it("keeps what a client must never see out of the body: log details and causes", () => {
    const denied = new Errors.PermissionDenied({ capability: "x.y", resource: "r", logDetail: "no binding" })
    const internal = new Errors.Internal({ cause: new Error("disk on fire") })
    assert.notInclude(JSON.stringify(ErrorBody.render(denied, "d").body), "no binding")
    assert.notInclude(JSON.stringify(ErrorBody.render(internal, "d").body), "disk on fire")
  })

  it("decodes a body only into the error of its code", () => {
    const notFound = ErrorBody.schema(Errors.NotFound)
    const body = ErrorBody.render(new Errors.AlreadyExists({ resourceType: "group", description: "x" }), "d").body
    assert.isTrue(Schema.decodeUnknownEither(notFound)(body)._tag === "Left")
    assert.isTrue(Schema.decodeUnknownEither(ErrorBody.schema(Errors.AlreadyExists))(body)._tag === "Right")
  })

  it("reads a body without its detail as the error of its code, with the message's text", () => {
    const parsed = ErrorBody.parse({ code: 9, message: "Precondition failed: busy", details: [] })
    assert.instanceOf(parsed, Errors.FailedPrecondition)
    assert.strictEqual(parsed?._tag === "FailedPrecondition" && parsed.summary, "busy")
    assert.isUndefined(ErrorBody.parse({ code: 42, message: "?", details: [] }))
  })
})
