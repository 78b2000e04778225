/**
 * The audit trail of a group and everything below it: the latest entries (who changed what, when, in answer to which
 * request), then each new one as it commits, live (the watch stream), announced to screen readers as it arrives.
 */
import * as Names from "@arbor/api/Names"
import type * as ChangeLog from "@arbor/core/ChangeLog"
import { useEffect, useState } from "preact/hooks"
import * as Client from "../Client.js"
import { useConnection } from "../Connection.js"
import * as Route from "../Route.js"
import { CopyUid, ErrorMessage, Named, Table, Time, Uid } from "../ui/components.js"
import { useLoaded } from "../ui/hooks.js"

/** How many past entries the trail starts with. */
const recent = 50

/** `dev.chainguard.api.iam.group.created.v1` as a person reads it: `group created`. */
const what = (type: string) =>
  type.replace(/^dev\.chainguard\.api\./, "").replace(/\.v\d+$/, "").split(".").slice(1).join(" ")

/** Who made a change: their email, else their identity's name, or the system. */
const who = (actor: ChangeLog.Entry["actor"]) =>
  actor.email ?? (actor.subject === "system" ? "system" : <Named kind="identity" uid={actor.subject} />)

/** The trail of one group. */
const Trail = ({ group }: { readonly group: string }) => {
  const { client, session } = useConnection()
  const [entries, setEntries] = useState<ReadonlyArray<ChangeLog.Entry>>([])
  const [live, setLive] = useState<"connecting" | "live" | { readonly error: string }>("connecting")
  const [arrived, setArrived] = useState(0)
  useEffect(() => {
    const stop = new AbortController()
    setEntries([])
    // The latest entries, then the log from the newest of them on: nothing between the two is missed.
    Client.run(client.auditTrail.list({ urlParams: { descendantsOf: group, orderBy: "time desc", pageSize: recent } }))
      .then((page) => {
        setEntries(page.events)
        return Client.watch({
          token: session.token,
          group,
          after: page.events[0]?.position,
          onOpen: () => setLive("live"),
          onEntry: (entry) => {
            setEntries((shown) => [entry, ...shown.filter((e) => e.id !== entry.id)])
            setArrived((n) => n + 1)
          },
          signal: stop.signal
        })
      })
      .catch((error: Error) => stop.signal.aborted || setLive({ error: error.message }))
    return () => stop.abort()
  }, [group])
  return (
    <>
      <p class="muted" aria-live="polite">
        {live === "live" ? `Live: new entries appear at the top${arrived > 0 ? ` (${arrived} so far)` : ""}.` : null}
      </p>
      <ErrorMessage error={typeof live === "object" ? live.error : undefined} />
      <Table
        caption="Audit trail, newest first"
        items={entries}
        keyOf={(e) => e.id}
        empty="No entries yet."
        columns={[
          ["When", (e) => <Time at={e.time} />],
          ["What", (e) => what(e.type)],
          ["Resource", (e) => {
            const name = Names.ofEntry(e)
            return name === undefined ? <Uid uid={e.subject} /> : (
              <span class="named">
                <span title={e.subject}>{name}</span>
                <CopyUid uid={e.subject} />
              </span>
            )
          }],
          ["Where", (e) => <Named kind="group" uid={e.group} />],
          ["Who", (e) => who(e.actor)],
          ["Request", (e) => e.requestId === undefined ? null : <code>{e.requestId}</code>]
        ]}
      />
    </>
  )
}

export const AuditTrail = ({ group }: { readonly group: string | undefined }) => {
  const { client } = useConnection()
  const organizations = useLoaded(
    () => Client.run(client.groups.list({ urlParams: { inRoot: true, orderBy: "name", pageSize: 200 } })),
    []
  )
  const shown = group ?? organizations.value?.groups[0]?.uid
  return (
    <section>
      <h1>Audit trail</h1>
      <ErrorMessage error={organizations.error} />
      <nav aria-label="Organizations" class="tabs">
        {(organizations.value?.groups ?? []).map((g) => (
          <a
            key={g.uid}
            href={Route.href({ _tag: "Audit", group: g.uid })}
            aria-current={g.uid === shown ? "page" : undefined}
          >
            {g.name}
          </a>
        ))}
      </nav>
      {shown === undefined ? null : <Trail key={shown} group={shown} />}
    </section>
  )
}
