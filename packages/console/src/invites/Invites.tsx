/**
 * A group's invites: the codes that bind whoever redeems them to a role there. A new invite's code is shown once,
 * with a button that copies it; the list never shows codes.
 */
import type { GroupInvite } from "@arbor/core/GroupInvite"
import { useState } from "preact/hooks"
import * as Client from "../Client.js"
import { useConnection } from "../Connection.js"
import { IfMay } from "../groups/Held.js"
import { useRoleChoice } from "../roles/RoleChoice.js"
import { CopyButton, DeleteButton, ErrorMessage, Field, Form, ShowMore, Table, Time } from "../ui/components.js"
import { useAction, usePages } from "../ui/hooks.js"
import * as Rules from "../ui/rules.js"

export const Invites = ({ group }: { readonly group: string }) => {
  const { client } = useConnection()
  const list = usePages(
    (pageToken) =>
      Client.run(client.groupInvites.list({ urlParams: { childrenOf: group, pageToken } })).then((page) => ({
        items: page.groupInvites,
        next: page.nextPageToken
      })),
    [group]
  )
  const role = useRoleChoice()
  const [code, setCode] = useState<string | undefined>(undefined)
  // The invite being changed (its email and single use), or none: a new one.
  const [editing, setEditing] = useState<GroupInvite | undefined>(undefined)
  const save = useAction((form: Record<string, string>) => {
    const changes = { ...(form.email ? { email: form.email } : {}), singleUse: form.singleUse === "on" }
    return editing === undefined
      ? Client.run(client.groupInvites.create({
        path: { uid: group },
        payload: {
          roleUid: role.chosen(),
          ...(form.ttl ? { ttl: Rules.secondsOf(form.ttl) ?? form.ttl } : {}),
          ...changes
        }
      })).then((invite) => {
        setCode(invite.code)
        list.reload()
      })
      : Client.run(client.groupInvites.update({
        path: { uid: editing.uid },
        urlParams: { updateMask: "email,singleUse" },
        payload: changes
      })).then(() => {
        setEditing(undefined)
        list.reload()
      })
  })
  const remove = useAction((uid: string) => Client.run(client.groupInvites.delete({ path: { uid } })).then(list.reload))
  return (
    <div class="columns">
      <div>
        <h2>Invites</h2>
        {code === undefined ? null : (
          <div class="card notice" role="status">
            <h3>The new invite's code</h3>
            <p>It is shown this once: copy it now and send it to the person you invite.</p>
            <pre class="code" aria-label="Invite code">{code}</pre>
            <CopyButton text={code} label="Copy the code" />
          </div>
        )}
        <ErrorMessage error={list.error ?? remove.error} />
        <Table
          caption="Invites to this group"
          items={list.items}
          keyOf={(i) => i.uid}
          empty={list.loading ? "Loading…" : "No invites."}
          columns={[
            ["Role", (i) => i.role?.name ?? i.roleUid],
            ["For", (i) => i.email ?? "anyone"],
            ["Expires", (i) => <Time at={i.expirationTime} />],
            ["Single use", (i) => (i.singleUse ? "yes" : "no")],
            ["Actions", (i) => (
              <div class="actions">
                <IfMay capability="group_invites.update">
                  <button type="button" aria-label="Change this invite" onClick={() => setEditing(i)}>Change</button>
                </IfMay>
                <IfMay capability="group_invites.delete">
                  <DeleteButton
                    what={`the invite as ${i.role?.name ?? i.roleUid} for ${i.email ?? "anyone"}`}
                    busy={remove.busy}
                    onDelete={() => void remove.start(i.uid)}
                  />
                </IfMay>
              </div>
            )]
          ]}
        />
        <ShowMore more={list.more} />
      </div>
      <IfMay capability="group_invites.create">
        <Form
          key={editing?.uid ?? "new"}
          title={editing === undefined ? "New invite" : "Change the invite"}
          submit={editing === undefined ? "Create invite" : "Save invite"}
          busy={save.busy}
          error={save.error}
          onSubmit={save.start}
        >
          {editing === undefined ? role.field : <p>Role: {editing.role.name}</p>}
          <Field
            label="Email"
            name="email"
            type="email"
            autocomplete="off"
            hint="Only this person may redeem it (optional)"
            defaultValue={editing?.email}
          />
          {editing === undefined
            ? (
              <Field
                label="Valid for"
                name="ttl"
                autocomplete="off"
                placeholder="e.g. 2 days"
                hint="How long it can be redeemed, as in 2 days or 12 hours. Default: the server's"
                rule={Rules.duration}
              />
            )
            : null}
          <label class="check">
            <input type="checkbox" name="singleUse" defaultChecked={editing?.singleUse} />
            Single use
          </label>
          {editing === undefined ? null : <button type="button" onClick={() => setEditing(undefined)}>Cancel</button>}
        </Form>
      </IfMay>
    </div>
  )
}
