/**
 * Just-in-time elevation (docs/api.md §2): `arbor iam eligibilities` (who may elevate to what, where, for how long,
 * approved by whom), `arbor iam elevate` (ask, with a reason) and `arbor iam approvals` (decide what others asked).
 */
import { Wire } from "@arbor/api"
import * as Names from "@arbor/api/Names"
import type { Elevation } from "@arbor/core/Elevation"
import type { Eligibility } from "@arbor/core/Eligibility"
import { Args, Command, Options } from "@effect/cli"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { UsageError } from "../../Failure.js"
import * as Help from "../../Help.js"
import type * as Output from "../../Output.js"
import {
  callerOf,
  type Client,
  common,
  connect,
  output,
  parent,
  printRows,
  resolveGroup,
  resolveIdentity,
  resolveRole
} from "../shared.js"

/** A duration as a person writes it for `flag` (`90m`, `8h`, `1d`), as whole seconds the API takes (`"5400s"`). */
export const secondsOf = (flag: string) => (text: string): Effect.Effect<string, UsageError> => {
  const units: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3_600, d: 86_400 }
  const match = /^(\d{1,6})([smhd])$/.exec(text.trim())
  return match === null
    ? Effect.fail(new UsageError({ message: `--${flag} ${text}: give a duration such as 90m, 8h or 1d` }))
    : Effect.succeed(`${Number(match[1]) * units[match[2]!]!}s`)
}

/** A name for each uid of identities and roles that `rows` name, as a person reads them (uids where unreadable). */
const namesOf = (
  client: Client,
  rows: ReadonlyArray<
    { readonly identityUid: string; readonly roleUid: string; readonly approverRoleUid?: string | null }
  >
) =>
  Effect.gen(function*() {
    const names = yield* Names.reader(client)
    const found = new Map<string, string>()
    for (const row of rows) {
      found.set(row.identityUid, yield* names.identity(row.identityUid))
      found.set(row.roleUid, yield* names.role(row.roleUid))
      if (row.approverRoleUid) found.set(row.approverRoleUid, yield* names.role(row.approverRoleUid))
    }
    return (uid: string) => found.get(uid) ?? uid
  })

/** A span of seconds as a person reads it: `90 min`, `8 h`. */
const span = (seconds: number) => seconds % 3_600 === 0 ? `${seconds / 3_600} h` : `${Math.round(seconds / 60)} min`

const eligibilityShape = (name: (uid: string) => string): Output.Shape<Eligibility> => ({
  json: Wire.Eligibility,
  columns: [
    { heading: "IDENTITY", value: (e) => name(e.identityUid) },
    { heading: "ROLE", value: (e) => name(e.roleUid) },
    { heading: "AT MOST", value: (e) => span(e.maxDurationSeconds) },
    { heading: "APPROVED BY", value: (e) => e.approverRoleUid === null ? "(at once)" : name(e.approverRoleUid) },
    { heading: "UID", value: (e) => e.uid }
  ]
})

/** Where an elevation stands, as a person reads it. */
const standing = (e: Elevation): string =>
  e.state === "ACTIVE" && e.expireTime !== null
    ? `granted until ${DateTime.formatIso(e.expireTime)}`
    : e.state === "PENDING"
    ? "waiting for approval"
    : e.state.toLowerCase()

const elevationShape = (name: (uid: string) => string): Output.Shape<Elevation> => ({
  json: Wire.Elevation,
  columns: [
    { heading: "IDENTITY", value: (e) => name(e.identityUid) },
    { heading: "ROLE", value: (e) => name(e.roleUid) },
    { heading: "FOR", value: (e) => span(e.durationSeconds) },
    { heading: "REASON", value: (e) => e.reason },
    { heading: "STATE", value: standing },
    { heading: "UID", value: (e) => e.uid }
  ]
})

/** Prints elevations in `format`, their identities and roles by name. */
const printElevations = (client: Client, rows: ReadonlyArray<Elevation>, format: Output.Format) =>
  Effect.flatMap(namesOf(client, rows), (name) => printRows(rows, elevationShape(name), format))

/** Prints eligibilities in `format`, their identities and roles by name. */
const printEligibilities = (client: Client, rows: ReadonlyArray<Eligibility>, format: Output.Format) =>
  Effect.flatMap(namesOf(client, rows), (name) => printRows(rows, eligibilityShape(name), format))

const elevationUid = Args.text({ name: "elevation" }).pipe(Args.withDescription("the elevation's uid"))

/** `arbor iam eligibilities`. */
export const eligibilities = Command.make("eligibilities").pipe(
  Command.withDescription("Eligibilities: who may elevate to a role at a group, for how long, approved by whom."),
  Help.withSubcommands([
    Command.make("list", { ...common, output }, (flags) =>
      Effect.gen(function*() {
        const client = yield* connect(flags)
        const page = yield* client.eligibilities.list({ urlParams: {} })
        yield* printEligibilities(client, page.eligibilities, flags.output)
      })).pipe(Command.withDescription("List the eligibilities you may see. Example: arbor iam eligibilities list")),
    Command.make(
      "create",
      {
        ...common,
        output,
        parent,
        identity: Options.text("identity").pipe(
          Options.withDescription("the identity: its uid, or its group's path and its name (acme/ci)")
        ),
        role: Options.text("role").pipe(Options.withDescription("the role's uid or name")),
        max: Options.text("max").pipe(Options.withDescription("the longest one elevation may last: 90m, 8h, 1d")),
        approverRole: Options.text("approver-role").pipe(
          Options.withDescription("the role whose holders there approve (not the one who asks); none: at once"),
          Options.optional
        )
      },
      (flags) =>
        Effect.gen(function*() {
          const client = yield* connect(flags)
          const group = yield* resolveGroup(client, flags.parent)
          const payload = {
            identityUid: yield* resolveIdentity(client, flags.identity),
            roleUid: yield* resolveRole(client, flags.role),
            maxDuration: yield* secondsOf("max")(flags.max),
            ...(Option.isNone(flags.approverRole)
              ? {}
              : { approverRoleUid: yield* resolveRole(client, flags.approverRole.value) })
          }
          const made = yield* client.eligibilities.create({ path: { uid: group }, payload })
          yield* printEligibilities(client, [made], flags.output)
          // Whoever is elevated to a role that binds may make bindings of their own that outlast the elevation.
          const role = yield* client.roles.get({ path: { uid: made.roleUid } })
          if (role.capabilities.includes("role_bindings.create")) {
            yield* Effect.sync(() =>
              process.stderr.write(
                `Warning: ${role.name} holds role_bindings.create: an elevated identity may make bindings of its own ` +
                  "there that outlast the elevation\n"
              )
            )
          }
        })
    ).pipe(Command.withDescription(
      "Make an identity eligible for a role at a group. " +
        "Example: arbor iam eligibilities create --parent acme/prod --identity acme/alice --role editor --max 8h " +
        "--approver-role owner"
    )),
    Command.make("delete", { ...common, uid: Args.text({ name: "eligibility" }) }, (flags) =>
      Effect.gen(function*() {
        const client = yield* connect(flags)
        yield* client.eligibilities.delete({ path: { uid: flags.uid } })
        yield* Effect.sync(() => process.stderr.write(`Deleted ${flags.uid}; its elevations ended\n`))
      })).pipe(Command.withDescription(
        "Delete an eligibility: its pending and granted elevations end at once. " +
          "Example: arbor iam eligibilities delete <uid>"
      ))
  ])
)

/** `arbor iam elevate`. */
export const elevate = Command.make(
  "elevate",
  {
    ...common,
    output,
    role: Options.text("role").pipe(Options.withDescription("the role you are eligible for: its uid or name")),
    at: Options.text("at").pipe(Options.withDescription("the group: its uid or path of names (acme/prod)")),
    duration: Options.text("for").pipe(Options.withDescription("how long: 90m, 1h, 8h (at most the eligibility's)")),
    reason: Options.text("reason").pipe(Options.withDescription("why, for the approver and the audit trail"))
  },
  (flags) =>
    Effect.gen(function*() {
      if (flags.reason.trim() === "") return yield* new UsageError({ message: "--reason: say why" })
      const client = yield* connect(flags)
      const group = yield* resolveGroup(client, flags.at)
      const asked = yield* client.elevations.create({
        path: { uid: group },
        payload: {
          roleUid: yield* resolveRole(client, flags.role),
          reason: flags.reason,
          duration: yield* secondsOf("for")(flags.duration)
        }
      })
      yield* printElevations(client, [asked], flags.output)
    })
).pipe(Command.withDescription(
  "Ask to hold a role you are eligible for, for a while and a reason: granted at once, or once approved. " +
    "Example: arbor iam elevate --role editor --at acme/prod --for 1h --reason \"hotfix INC-7\""
))

/** `arbor iam approvals`. */
export const approvals = Command.make("approvals").pipe(
  Command.withDescription("Elevations others asked for, waiting for an approver."),
  Help.withSubcommands([
    Command.make("list", { ...common, output }, (flags) =>
      Effect.gen(function*() {
        const client = yield* connect(flags)
        // Those the caller may approve, whatever it may list: the engine decides who approves.
        const page = yield* client.elevations.list({ urlParams: { approver: yield* callerOf(flags) } })
        yield* printElevations(client, page.elevations, flags.output)
      })).pipe(Command.withDescription(
        "List the elevations others asked for that you may approve. Example: arbor iam approvals list"
      )),
    Command.make("approve", { ...common, output, elevation: elevationUid }, (flags) =>
      Effect.gen(function*() {
        const client = yield* connect(flags)
        const approved = yield* client.elevations.approve({ path: { uid: flags.elevation }, payload: {} })
        yield* printElevations(client, [approved], flags.output)
      })).pipe(Command.withDescription(
        "Approve an elevation someone else asked for (you hold its approver role). Example: arbor iam approvals approve <uid>"
      )),
    Command.make("deny", { ...common, output, elevation: elevationUid }, (flags) =>
      Effect.gen(function*() {
        const client = yield* connect(flags)
        const denied = yield* client.elevations.deny({ path: { uid: flags.elevation }, payload: {} })
        yield* printElevations(client, [denied], flags.output)
      })).pipe(Command.withDescription("Deny an elevation. Example: arbor iam approvals deny <uid>"))
  ])
)
