/**
 * A group's identities (workloads that assume them through their tokens' claims), and a form for a new one whose
 * claim match is built from what a person knows of the workload (`claimMatch.ts`), shown before it is sent.
 */
import * as Client from "../Client.js"
import { useConnection } from "../Connection.js"
import { IfMay } from "../groups/Held.js"
import * as Route from "../Route.js"
import { DeleteButton, ErrorMessage, Form, NameFields, ShowMore, Table, Uid } from "../ui/components.js"
import { useAction, usePages } from "../ui/hooks.js"
import { useClaimMatchBuilder } from "./ClaimMatchBuilder.js"

export const Identities = ({ group }: { readonly group: string }) => {
  const { client } = useConnection()
  const list = usePages(
    (pageToken) =>
      Client.run(client.identities.list({ urlParams: { childrenOf: group, orderBy: "name", pageToken } })).then(
        (page) => ({ items: page.identities, next: page.nextPageToken })
      ),
    [group]
  )
  const builder = useClaimMatchBuilder()
  const claimMatch = builder.claimMatch
  const create = useAction((form: Record<string, string>) =>
    Client.run(client.identities.create({
      path: { uid: group },
      payload: { name: form.name ?? "", description: form.description ?? "", claimMatch }
    })).then(list.reload)
  )
  const remove = useAction((uid: string) => Client.run(client.identities.delete({ path: { uid } })).then(list.reload))
  return (
    <div class="columns stacked">
      <div>
        <h2>Identities</h2>
        <ErrorMessage error={list.error ?? remove.error} />
        <Table
          caption="Identities in this group"
          items={list.items}
          keyOf={(i) => i.uid}
          empty={list.loading ? "Loading…" : "No identities here yet."}
          columns={[
            ["Name", (i) => <a href={Route.href({ _tag: "Identity", uid: i.uid })}>{i.name}</a>],
            ["Issuer", (i) => i.issuer],
            ["Subject", (i) => i.subject || i.claimMatch?.subjectPattern],
            ["Uid", (i) => <Uid uid={i.uid} />],
            ["Actions", (i) => (
              <IfMay capability="identity.delete">
                <DeleteButton
                  what={`identity ${i.name}`}
                  busy={remove.busy}
                  onDelete={() => void remove.start(i.uid)}
                />
              </IfMay>
            )]
          ]}
        />
        <ShowMore more={list.more} />
      </div>
      <IfMay capability="identity.create">
        <Form
          title="New identity"
          submit="Create identity"
          done="Identity created."
          busy={create.busy}
          error={create.error}
          onSubmit={create.start}
        >
          <NameFields />
          {builder.fields}
        </Form>
      </IfMay>
    </div>
  )
}
