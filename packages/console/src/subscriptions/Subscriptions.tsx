/** A group's webhook subscriptions: each receives, as signed CloudEvents, every change of the group and below it. */
import type { Subscription } from "@arbor/core/Subscription"
import * as Client from "../Client.js"
import { useConnection } from "../Connection.js"
import { IfMay } from "../groups/Held.js"
import { DeleteButton, ErrorMessage, Field, Form, ShowMore, Table, Time } from "../ui/components.js"
import { useAction, usePages } from "../ui/hooks.js"

/** How a subscription's deliveries stand: its state, what waits, and why it fails or stopped. */
const Health = ({ health }: { readonly health: Subscription["health"] }) => {
  if (health === undefined) return null
  const why = health.reason ?? health.lastError
  return (
    <span>
      {health.state === "ACTIVE" ? "Active" : health.state === "FAILING" ? "Failing" : "Stopped"}
      {health.pending > 0 ? `, ${health.pending} waiting` : ""}
      {health.failingSince === undefined ? null : (
        <>
          {" since "}
          <Time at={health.failingSince} />
        </>
      )}
      {why === undefined ? null : <>: {why}</>}
      {health.sendingSince === undefined ? null : (
        <>
          {", waiting for its sink since "}
          <Time at={health.sendingSince} />
        </>
      )}
    </span>
  )
}

export const Subscriptions = ({ group }: { readonly group: string }) => {
  const { client } = useConnection()
  const list = usePages(
    (pageToken) =>
      Client.run(client.subscriptions.list({ urlParams: { childrenOf: group, pageToken } })).then((page) => ({
        items: page.subscriptions,
        next: page.nextPageToken
      })),
    [group]
  )
  const create = useAction((form: Record<string, string>) =>
    Client.run(client.subscriptions.create({ path: { uid: group }, payload: { sink: form.sink ?? "" } })).then(
      list.reload
    )
  )
  const remove = useAction((uid: string) =>
    Client.run(client.subscriptions.delete({ path: { uid } })).then(list.reload)
  )
  return (
    <div class="columns">
      <div>
        <h2>Subscriptions</h2>
        <ErrorMessage error={list.error ?? remove.error} />
        <Table
          caption="Subscriptions of this group"
          items={list.items}
          keyOf={(s) => s.uid}
          empty={list.loading ? "Loading…" : "No subscriptions."}
          columns={[
            ["Sink", (s) => <code>{s.sink}</code>],
            ["Health", (s) => <Health health={s.health} />],
            ["Since", (s) => <Time at={s.createTime} />],
            ["Actions", (s) => (
              <IfMay capability="subscriptions.delete">
                <DeleteButton
                  what={`the subscription to ${s.sink}`}
                  busy={remove.busy}
                  onDelete={() => void remove.start(s.uid)}
                />
              </IfMay>
            )]
          ]}
        />
        <ShowMore more={list.more} />
      </div>
      <IfMay capability="subscriptions.create">
        <Form
          title="New subscription"
          submit="Subscribe"
          busy={create.busy}
          error={create.error}
          onSubmit={create.start}
        >
          <Field label="Sink" name="sink" type="url" required autocomplete="off" placeholder="https://…" />
        </Form>
      </IfMay>
    </div>
  )
}
