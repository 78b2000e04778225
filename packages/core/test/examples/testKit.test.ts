import * as Fixture from "@arbor/core/testing/Fixture"
import { afterAll, beforeAll, expect, it } from "vitest"

// The organization your code runs against, seeded into a fresh in-memory engine for each suite.
const fixture = `
organizations:
  acme:
    folders: { prod: {}, staging: {} }
    roles: { deployer: [repo.create, repo.update, repo.list] }
    identities:
      ci: { issuer: https://token.actions.githubusercontent.com, subject: "repo:acme/app:ref:refs/heads/main" }
    bindings:
      - { identity: ci, role: deployer, group: prod }
`

let arbor: Fixture.Started
beforeAll(async () => {
  arbor = await Fixture.start(fixture)
})
afterAll(() => arbor.dispose())

it("lets CI deploy to prod, not to staging", async () => {
  await arbor.expectAllowed("ci", "repo.create", "acme/prod")
  await arbor.expectDenied("ci", "repo.create", "acme/staging")
})

it("says what an identity holds when an expectation fails", async () => {
  await expect(arbor.expectAllowed("ci", "repo.delete", "acme/prod")).rejects.toThrow(
    "expected ci to hold repo.delete at acme/prod; it holds there: repo.create, repo.update, repo.list"
  )
})
