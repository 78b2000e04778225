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
import { Choice, CopyUid, ErrorMessage, Field, Form, Named, Table, Time, Uid } from "../ui/components.js"
import { useAction, useLoaded } from "../ui/hooks.js"

/** How many past entries the trail starts with. */
const recent = 50

/** Who made a change: their email, else their identity's name, or the system. */
const who = (actor: ChangeLog.Entry["actor"]) =>
  actor.email ?? (actor.subject === "system" ? "system" : <Named kind="identity" uid={actor.subject} />)

/** What the trail is narrowed to: a kind of resource, an actor (an identity's uid, or `system`), a time window. */
interface Filter {
  readonly kind?: string | undefined
  readonly actor?: string | undefined
  readonly since?: string | undefined
  readonly until?: string | undefined
}

/** A `datetime-local` input's value as RFC 3339, in the person's own time zone; undefined when empty. */
const instant = (local: string | undefined) =>
  local === undefined || local === "" ? undefined : new Date(local).toISOString()

/** The filters: what, who, since, until; who as a person types it (a path and name, or system). */
const Filters = ({ onApply }: { readonly onApply: (filter: Filter) => void }) => {
  const { client } = useConnection()
  const [kind, setKind] = useState("")
  const apply = useAction(async (values: Record<string, string>) => {
    const who = values.who?.trim() ?? ""
    const actor = who === "" || who === "system" ? who : await Client.run(Names.identity(client, who))
    onApply({
      ...(kind === "" ? {} : { kind }),
      ...(actor === "" ? {} : { actor }),
      since: instant(values.since),
      until: instant(values.until)
    })
  })
  return (
    <Form title="Filter" submit="Show" busy={apply.busy} error={apply.error} onSubmit={apply.start} keep done="Shown.">
      <div class="filters">
        <Choice
          label="What"
          value={kind}
          onChange={setKind}
          options={[["", "Anything"], ...Names.kindsInWords]}
        />
        <Field label="Who" name="who" hint="An identity (acme/platform/deployer), a person's name, or system." />
        <Field label="Since" name="since" type="datetime-local" />
        <Field label="Until" name="until" type="datetime-local" />
      </div>
    </Form>
  )
}

/** The trail of one group, as `filter` narrows it. */
const Trail = ({ filter, group }: { readonly group: string; readonly filter: Filter }) => {
  const { client, session } = useConnection()
  const [entries, setEntries] = useState<ReadonlyArray<ChangeLog.Entry>>([])
  const [live, setLive] = useState<"connecting" | "live" | { readonly error: string }>("connecting")
  const [arrived, setArrived] = useState(0)
  useEffect(() => {
    const stop = new AbortController()
    setEntries([])
    // The latest entries, then the log from the newest of them on: nothing between the two is missed.
    const narrowed = {
      ...(filter.kind === undefined ? {} : { kinds: [filter.kind] }),
      ...(filter.actor === undefined ? {} : { actor: filter.actor })
    }
    Client.run(client.auditTrail.list({
      urlParams: {
        descendantsOf: group,
        orderBy: "time desc",
        pageSize: recent,
        ...narrowed,
        ...(filter.since === undefined ? {} : { since: filter.since }),
        ...(filter.until === undefined ? {} : { until: filter.until })
      }
    }))
      .then((page) => {
        setEntries(page.events)
        // A window that has ended has nothing more to follow.
        if (filter.until !== undefined) return
        return Client.watch({
          token: session.token,
          group,
          ...narrowed,
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
  }, [group, filter])
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
        empty={Object.values(filter).some((v) => v !== undefined) ? "No entries match." : "No entries yet."}
        columns={[
          ["When", (e) => <Time at={e.time} />],
          ["What", (e) => {
            const changed = Names.changedFields(e)
            return changed.length === 0 ? Names.ofChange(e) : (
              <>
                {Names.ofChange(e)}
                <span class="changed">{Names.ofChangedFields(changed)}</span>
              </>
            )
          }],
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
  const [filter, setFilter] = useState<Filter>({})
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
      <Filters onApply={setFilter} />
      {shown === undefined ? null : <Trail key={shown} group={shown} filter={filter} />}
    </section>
  )
}
