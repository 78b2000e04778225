/**
 * Just-in-time elevation in the console (docs/api.md §2): what the person may ask for, each of their eligibilities
 * with a reason and a duration ("Request access"), and what waits for an approver ("Approve" / "Deny"). Names, not
 * uids; the server decides who may approve (never the one who asked), and says so in words when it refuses.
 */
import type { Elevation } from "@arbor/core/Elevation"
import type { Eligibility } from "@arbor/core/Eligibility"
import { useState } from "preact/hooks"
import * as Client from "../Client.js"
import { useConnection } from "../Connection.js"
import * as Route from "../Route.js"
import { Choice, ErrorMessage, Field, Form, Named, Table } from "../ui/components.js"
import { useAction, useLoaded } from "../ui/hooks.js"

/** The durations a person may pick, up to the eligibility's longest: [seconds, words]. */
const durations = [
  [900, "15 minutes"],
  [1800, "30 minutes"],
  [3600, "1 hour"],
  [7200, "2 hours"],
  [
    14400,
    "4 hours"
  ],
  [28800, "8 hours"],
  [86400, "1 day"]
] as const

/** A span of seconds in words. */
const span = (seconds: number) =>
  durations.find(([s]) => s === seconds)?.[1] ??
    (seconds % 3600 === 0 ? `${seconds / 3600} hours` : `${Math.round(seconds / 60)} minutes`)

/** Where an elevation stands, in words. */
const standing = (e: Elevation) =>
  e.state === "ACTIVE" && e.expireTime !== null
    ? `granted until ${new Date(e.expireTime.epochMillis).toLocaleString()}`
    : e.state === "PENDING"
    ? "waiting for approval"
    : e.state.toLowerCase()

/** One eligibility of the person's: a request of it, for a reason and a while. */
const RequestAccess = ({ eligibility, onAsked, title }: {
  readonly eligibility: Eligibility
  readonly title: string
  readonly onAsked: (asked: Elevation) => void
}) => {
  const { client } = useConnection()
  const choices = durations.filter(([s]) => s <= eligibility.maxDurationSeconds)
  const [duration, setDuration] = useState("")
  const group = eligibility.uid.slice(0, eligibility.uid.lastIndexOf("/"))
  const ask = useAction((form: Record<string, string>) =>
    Client.run(client.elevations.create({
      path: { uid: group },
      payload: { roleUid: eligibility.roleUid, reason: form.reason ?? "", duration: `${duration}s` }
    })).then(onAsked)
  )
  return (
    <Form
      title={title}
      submit="Request access"
      busy={ask.busy}
      error={ask.error}
      onSubmit={ask.start}
      done={eligibility.approverRoleUid === null ? "Granted." : "Asked: waiting for an approver."}
    >
      <p>
        Role <Named kind="role" uid={eligibility.roleUid} /> at{" "}
        <Named kind="group" uid={group} href={Route.href(Route.group(group, "bindings"))} />, for at most{" "}
        {span(eligibility.maxDurationSeconds)}
        {eligibility.approverRoleUid === null ? ", granted at once" : (
          <>
            , once someone holding <Named kind="role" uid={eligibility.approverRoleUid} /> approves
          </>
        )}.
      </p>
      <Choice
        label="For"
        value={duration}
        options={choices.map(([s, words]) => [String(s), words] as const)}
        onChange={setDuration}
        choose
        required
      />
      <Field label="Reason" hint="Why: the approver and the audit trail read it" name="reason" required />
    </Form>
  )
}

export const ElevationsPage = () => {
  const { client, session } = useConnection()
  const mine = useLoaded(
    () => Client.run(client.eligibilities.list({ urlParams: { identity: session.identity } })),
    [session.identity]
  )
  // What waits: what one may list, and what one may approve (the engine's answer, whatever one may list).
  const waiting = useLoaded(
    () =>
      Promise.all([
        Client.run(client.elevations.list({ urlParams: { state: "PENDING" } })),
        Client.run(client.elevations.list({ urlParams: { approver: session.identity } }))
      ]).then(([listed, approvable]) => ({
        elevations: [
          ...approvable.elevations,
          ...listed.elevations.filter((e) => !approvable.elevations.some((a) => a.uid === e.uid))
        ],
        approvable: new Set(approvable.elevations.map((e) => e.uid))
      })),
    [session.identity]
  )
  const [asked, setAsked] = useState<Elevation | undefined>(undefined)
  const decide = useAction((uid: string, approve: boolean) =>
    Client.run(
      approve
        ? client.elevations.approve({ path: { uid }, payload: {} })
        : client.elevations.deny({ path: { uid }, payload: {} })
    ).then(waiting.reload)
  )
  return (
    <section>
      <h1>Access requests</h1>
      <h2>Request access</h2>
      <ErrorMessage error={mine.error} />
      {mine.value === undefined ? <p class="empty">{mine.loading ? "Loading…" : ""}</p> : mine.value.eligibilities
          .length === 0
        ? <p class="empty">You have no eligibilities: no role to ask for.</p>
        : (
          <div class="columns">
            {mine.value.eligibilities.map((e, i, all) => (
              <RequestAccess
                key={e.uid}
                title={all.length === 1 ? "Request access" : `Request access (${i + 1} of ${all.length})`}
                eligibility={e}
                onAsked={(elevation) => {
                  setAsked(elevation)
                  waiting.reload()
                }}
              />
            ))}
          </div>
        )}
      {asked === undefined ? null : <p role="status">Your request: {standing(asked)}.</p>}
      <h2>Waiting for approval</h2>
      <ErrorMessage error={waiting.error ?? decide.error} />
      <Table
        caption="Requests waiting for an approver"
        items={waiting.value?.elevations ?? []}
        keyOf={(e) => e.uid}
        empty={waiting.loading ? "Loading…" : "Nothing waits for an approver that you can see."}
        columns={[
          ["Who", (e) => <Named kind="identity" uid={e.identityUid} />],
          ["Role", (e) => <Named kind="role" uid={e.roleUid} />],
          ["For", (e) => span(e.durationSeconds)],
          ["Why", (e) => e.reason],
          ["Decide", (e) =>
            e.identityUid === session.identity ?
              "Yours: someone else approves it" :
              !waiting.value?.approvable.has(e.uid)
              ? "Another approver decides"
              : (
                <>
                  <button
                    type="button"
                    class="primary"
                    disabled={decide.busy}
                    onClick={() => void decide.start(e.uid, true)}
                  >
                    Approve
                  </button>{" "}
                  <button type="button" disabled={decide.busy} onClick={() => void decide.start(e.uid, false)}>
                    Deny
                  </button>
                </>
              )]
        ]}
      />
    </section>
  )
}
