/**
 * The in-memory Layer that test suites use: a create, a get and a 50-item list page through the engine's services,
 * and `Fixture.start` of the README's fixture, whose targets are absolute (a test suite runs thousands of them). Beside each, the same number of empty effects run
 * through the same runtime, as the machine's yardstick: the ratio is the operation in empty-effect runs.
 */
import { Arbor, Groups, Identities, Principal, Role, RoleBindings } from "@arbor/core"
import * as Fixture from "@arbor/core/testing/Fixture"
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import type { Comparison, Figure } from "./Harness.js"
import { compare, section } from "./Harness.js"

/** The fixture of the README's "Test your code against it". */
const readmeFixture = `
organizations:
  acme:
    folders: { prod: {}, staging: {} }
    roles: { deployer: [repo.create, repo.update, repo.list] }
    identities:
      ci: { issuer: https://token.actions.githubusercontent.com, subject: "repo:acme/app:ref:refs/heads/main" }
    bindings:
      - { identity: ci, role: deployer, group: prod }
`

/** Runs the suite; returns its report section. */
export const run = async (_scale: number): Promise<string> => {
  const runtime = ManagedRuntime.make(Arbor.layerMemory)
  const exec = <A, E>(effect: Effect.Effect<A, E, Arbor.Services>) => runtime.runPromise(effect)
  const groups = await exec(Groups.Groups)
  const system = Principal.system
  const org = await exec(groups.createRoot(system, { name: "acme" }))
  // A test suite's data does not grow with the benchmark's scale.
  const seeded = 1000
  for (let i = 0; i < seeded; i++) await exec(groups.create(system, org.uid, { name: `seed ${i}` }))
  const empty = () => exec(Effect.void)
  /** `times` runs of `effect` in one program, as a test's `it.effect` makes its calls; and the same loop, empty. */
  const times = 50
  const inProgram = <A, E>(effect: (i: number) => Effect.Effect<A, E, Arbor.Services>) => () =>
    exec(Effect.gen(function*() {
      for (let i = 0; i < times; i++) yield* effect(i)
    }))
  const emptyProgram = inProgram(() => Effect.void)

  let n = 0
  const create = await compare("create a group, in a program", {
    ours: inProgram(() => groups.create(system, org.uid, { name: `new ${n++}` })),
    baseline: emptyProgram,
    baselineName: "the same program, its loop empty",
    perRound: 20,
    perCall: times
  })
  const get = await compare("get a group, in a program", {
    ours: inProgram(() => groups.get(system, org.uid)),
    baseline: emptyProgram,
    baselineName: "the same program, its loop empty",
    perRound: 100,
    perCall: times
  })
  const list = await compare(`list: first page of 50 of ${seeded} children, with totalCount, in a program`, {
    ours: inProgram(() => groups.list(system, { childrenOf: org.uid, pageSize: 50 })),
    baseline: emptyProgram,
    baselineName: "the same program, its loop empty",
    perRound: 10,
    perCall: times
  })
  // A viewer whose binding has a condition on the name: every row of the list decided (DECISIONS §21), beside a
  // viewer without one. Its condition holds for every seeded group.
  const viewerOf = (name: string, condition?: string) =>
    exec(Effect.gen(function*() {
      const identity = yield* (yield* Identities.Identities).create(system, org.uid, {
        name,
        claimMatch: { issuer: "https://bench.invalid", subject: name }
      })
      yield* (yield* RoleBindings.RoleBindings).create(system, org.uid, {
        identityUid: identity.uid,
        roleUid: Role.builtInByName("viewer")!.uid,
        ...(condition === undefined ? {} : { condition: { expression: condition } })
      })
      return Principal.identity(identity.uid)
    }))
  const plainViewer = await viewerOf("plain")
  const conditionalViewer = await viewerOf("conditional", `resource.name.startsWith("seed")`)
  const conditionalList = await compare(
    `list: first page of 50 of ${seeded} children, with totalCount, by a viewer whose binding has a condition`,
    {
      ours: inProgram(() => groups.list(conditionalViewer, { childrenOf: org.uid, pageSize: 50 })),
      baseline: inProgram(() => groups.list(plainViewer, { childrenOf: org.uid, pageSize: 50 })),
      baselineName: "the same list by a viewer without one",
      perRound: 5,
      perCall: times
    }
  )
  // One runPromise per call, as a test without Effect makes them: the runtime's own cost beside it.
  const getAlone = await compare("get a group, one runPromise each", {
    ours: () => exec(groups.get(system, org.uid)),
    baseline: empty,
    baselineName: "an empty effect, one runPromise each",
    perRound: 2000
  })
  await runtime.dispose()
  // The README's fixture, seeded into a fresh engine and disposed, as a test suite's beforeAll and afterAll do.
  const started = await compare("Fixture.start of the README's fixture, then dispose", {
    ours: async () => (await Fixture.start(readmeFixture)).dispose(),
    baseline: async () => {
      const fresh = ManagedRuntime.make(Arbor.layerMemory)
      await fresh.runPromise(Effect.void)
      await fresh.dispose()
    },
    baselineName: "a fresh in-memory engine, empty, then disposed",
    perRound: 20
  })

  const comparisons: Array<Comparison> = [create, get, list, conditionalList, getAlone, started]
  const micros = (ms: number) => `${(ms * 1000).toFixed(0)} µs`
  const figures: Array<Figure> = [
    { name: "create a group", value: micros(create.ours), target: "≤ 50 µs", met: create.ours <= 0.05 },
    { name: "get a group", value: micros(get.ours), target: "≤ 5 µs", met: get.ours <= 0.005 },
    { name: "list a page of 50 with totalCount", value: micros(list.ours), target: "≤ 100 µs", met: list.ours <= 0.1 },
    {
      name: `the same list by a conditional viewer (each of ${seeded} rows decided)`,
      value: micros(conditionalList.ours)
    },
    {
      name: "Fixture.start of the README's fixture",
      value: `${started.ours.toFixed(1)} ms`,
      target: "≤ 10 ms",
      met: started.ours <= 10
    }
  ]
  return section(
    "In-memory Layer",
    [
      `\`Arbor.layerMemory\`, as test suites use it: one organization with ${seeded} groups, the system principal.`,
      "Each operation run 50 times in one Effect program (as a test's `it.effect` makes its calls), beside the same",
      "program with its loop empty; a get also through one `runPromise` each, beside an empty effect so run. The",
      "targets are absolute."
    ],
    comparisons,
    figures
  )
}
