/**
 * A test kit for embedders' suites: a fixture (organizations, their folders, custom roles, identities and bindings,
 * as a TypeScript object or YAML) seeded into a fresh in-memory engine, and `expectAllowed` / `expectDenied`, which
 * ask the engine's own decision (`Access`) and say what the identity does hold when they fail. For `@effect/vitest`,
 * `layer(fixture)` and the Effect helpers; for plain vitest (or any runner), `start(fixture)`, whose helpers return
 * promises.
 *
 * ```yaml
 * organizations:
 *   acme:
 *     folders: { prod: { folders: { web: {} } }, staging: {} }
 *     roles: { deployer: [repo.create, repo.update, repo.list] }
 *     identities:
 *       ci: { issuer: https://token.actions.githubusercontent.com, subject: "repo:acme/app:ref:refs/heads/main" }
 *     bindings:
 *       - { identity: ci, role: deployer, group: prod }
 * ```
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Schema from "effect/Schema"
import { parse } from "yaml"
import * as Arbor from "../engine/Arbor.js"
import * as Uid from "../engine/Uid.js"
import * as Validation from "../engine/Validation.js"
import { Access } from "../iam/Access.js"
import * as Capability from "../iam/Capability.js"
import { Declarative } from "../iam/Declarative.js"
import * as OrganizationDocument from "../iam/OrganizationDocument.js"
import * as Principal from "../iam/Principal.js"

/**
 * A fixture: a document of organizations (`OrganizationDocument`, the same that `arbor export` prints and
 * `Declarative.apply` applies). Identity names are unique across it.
 */
export const Fixture = OrganizationDocument.Document
export type Fixture = typeof Fixture.Encoded

/** What a seeded fixture names: its groups by path (`acme/prod/web`) and its identities by name. */
export interface SeededService {
  /** The uid of a group by its path of names (`acme`, `acme/prod`), or a uid as it is. */
  readonly group: (path: string) => Uid.Uid
  /** The uid of an identity by its name. */
  readonly identity: (name: string) => Uid.Uid
  /** The principal of an identity by its name: what it may do is decided from its bindings on every call. */
  readonly principal: (name: string) => Principal.Principal
}

/** The seeded fixture's names. */
export class Seeded extends Context.Tag("@arbor/core/testing/Fixture/Seeded")<Seeded, SeededService>() {}

/** A fixture failed to seed: the reason, and where in the fixture. */
export class FixtureError extends Schema.TaggedError<FixtureError>()("FixtureError", { message: Schema.String }) {}

const unknown = (what: string, name: string) => new FixtureError({ message: `the fixture names no ${what} '${name}'` })

/** A fixture given as YAML, or as an object. */
const decode = (fixture: Fixture | string) =>
  Validation.decode(Fixture)(typeof fixture === "string" ? parse(fixture) : fixture).pipe(
    Effect.mapError((error) => new FixtureError({ message: `the fixture is not valid: ${error.message}` }))
  )

/**
 * Seeds `fixture` as the system principal, through `Declarative.apply` (as `arbor apply` would); answers its names.
 * An identity provider's `secretFrom` is read where the test runs, as `arbor apply` reads it on the machine it runs on:
 * `{env: NAME}` from this process's environment, `{file: path}` from its files.
 */
export const seed = (fixture: Fixture | string) =>
  Effect.gen(function*() {
    const decoded = yield* decode(fixture)
    const declarative = yield* Declarative
    yield* declarative.apply(Principal.system, decoded, { secretOf: OrganizationDocument.readSecret })
    const groups = new Map<string, Uid.Uid>()
    const identities = new Map<string, Uid.Uid>()
    for (const orgName of Object.keys(decoded.organizations)) {
      const uids = yield* declarative.uidsOf(Principal.system, orgName)
      for (const [path, uid] of uids.groups) groups.set(path === "" ? orgName : `${orgName}/${path}`, uid)
      for (const [path, uid] of uids.identities) {
        const name = path.split("/").at(-1)!
        if (identities.has(name)) return yield* new FixtureError({ message: `two identities are named '${name}'` })
        identities.set(name, uid)
      }
    }
    const named = (map: ReadonlyMap<string, Uid.Uid>, what: string) => (name: string): Uid.Uid => {
      const uid = map.get(name)
      if (uid === undefined) throw unknown(what, name)
      return uid
    }
    const group = (path: string) => groups.get(path) ?? (Uid.isUid(path) ? path : named(groups, "group")(path))
    const identity = named(identities, "identity")
    return { group, identity, principal: (name: string) => Principal.identity(identity(name)) } satisfies SeededService
  }).pipe(
    Effect.mapError((error) =>
      error instanceof FixtureError
        ? error
        : new FixtureError({ message: `the fixture cannot be seeded: ${error.message}` })
    )
  )

/** A fresh in-memory engine seeded with `fixture`, and its names (`Seeded`): for `@effect/vitest`'s `layer`. */
export const layer = (fixture: Fixture | string) =>
  Layer.effect(Seeded, seed(fixture)).pipe(Layer.provideMerge(Arbor.layerMemory))

/** A decision that went the other way than a test expected. */
export class UnexpectedDecision extends Schema.TaggedError<UnexpectedDecision>()("UnexpectedDecision", {
  message: Schema.String
}) {}

const expectDecision = (expected: boolean) => (identity: string, capability: string, group: string) =>
  Effect.gen(function*() {
    const names = yield* Seeded
    const access = yield* Access
    const held = Capability.fromName(capability)
    if (held === undefined) return yield* new UnexpectedDecision({ message: `'${capability}' is not a capability` })
    const principal = names.principal(identity)
    const at = names.group(group)
    if ((yield* access.can(principal, held, at)) === expected) return
    const grants = yield* access.searchActions(principal, {
      subject: { type: "identity", id: names.identity(identity) },
      resource: { type: "group", id: at }
    })
    return yield* new UnexpectedDecision({
      message: `expected ${identity} ${expected ? "to hold" : "not to hold"} ${held} at ${group}; it holds there: ${
        grants.join(", ") || "nothing"
      }`
    })
  })

/** Fails unless the fixture's identity `identity` holds `capability` at `group` (a path of names, or a uid). */
export const expectAllowed = expectDecision(true)

/** Fails if the fixture's identity `identity` holds `capability` at `group` (a path of names, or a uid). */
export const expectDenied = expectDecision(false)

/** A seeded engine for any test runner: its names, the helpers as promises, and `run` for anything else. */
export interface Started extends SeededService {
  readonly expectAllowed: (identity: string, capability: string, group: string) => Promise<void>
  readonly expectDenied: (identity: string, capability: string, group: string) => Promise<void>
  /** Runs an effect against the engine (its services, `Seeded`). */
  readonly run: <A, E>(effect: Effect.Effect<A, E, Arbor.Services | Seeded>) => Promise<A>
  /** Frees the engine. */
  readonly dispose: () => Promise<void>
}

/** Seeds `fixture` into a fresh in-memory engine: for plain vitest (`beforeAll(() => start(fixture))`). */
export const start = async (fixture: Fixture | string): Promise<Started> => {
  const runtime = ManagedRuntime.make(layer(fixture))
  const names = await runtime.runPromise(Seeded)
  return {
    ...names,
    expectAllowed: (identity, capability, group) => runtime.runPromise(expectAllowed(identity, capability, group)),
    expectDenied: (identity, capability, group) => runtime.runPromise(expectDenied(identity, capability, group)),
    run: (effect) => runtime.runPromise(effect),
    dispose: () => runtime.dispose()
  }
}
