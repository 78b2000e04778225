/**
 * A group's invites: the codes that bind whoever redeems them to a role there. A new invite's code is shown once,
 * with a button that copies it; the list never shows codes.
 */
import { useState } from "preact/hooks"
import * as Client from "../Client.js"
import { useConnection } from "../Connection.js"
import { useRoleChoice } from "../roles/RoleChoice.js"
import { CopyButton, DeleteButton, ErrorMessage, Field, Form, Table, Time } from "../ui/components.js"
import { useAction, useLoaded } from "../ui/hooks.js"

export const Invites = ({ group }: { readonly group: string }) => {
  const { client } = useConnection()
  const list = useLoaded(
    () => Client.run(client.groupInvites.list({ urlParams: { childrenOf: group, pageSize: 200 } })),
    [group]
  )
  const role = useRoleChoice()
  const [code, setCode] = useState<string | undefined>(undefined)
  const create = useAction((form: Record<string, string>) =>
    Client.run(client.groupInvites.create({
      path: { uid: group },
      payload: {
        roleUid: role.chosen(),
        ...(form.email ? { email: form.email } : {}),
        ...(form.ttl ? { ttl: form.ttl } : {}),
        singleUse: form.singleUse === "on"
      }
    })).then((invite) => {
      setCode(invite.code)
      list.reload()
    })
  )
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
          items={list.value?.groupInvites ?? []}
          keyOf={(i) => i.uid}
          empty={list.loading ? "Loading…" : "No invites."}
          columns={[
            ["Role", (i) => i.role?.name ?? i.roleUid],
            ["For", (i) => i.email ?? "anyone"],
            ["Expires", (i) => <Time at={i.expirationTime} />],
            ["Single use", (i) => (i.singleUse ? "yes" : "no")],
            [
              "",
              (i) => <DeleteButton what="this invite" busy={remove.busy} onDelete={() => void remove.start(i.uid)} />
            ]
          ]}
        />
      </div>
      <Form title="New invite" submit="Create invite" busy={create.busy} error={create.error} onSubmit={create.start}>
        {role.field}
        <Field
          label="Email"
          name="email"
          type="email"
          autocomplete="off"
          hint="Only this person may redeem it (optional)"
        />
        <Field label="Valid for" name="ttl" autocomplete="off" placeholder="e.g. 86400s" hint="Default: the server's" />
        <label class="check">
          <input type="checkbox" name="singleUse" />
          Single use
        </label>
      </Form>
    </div>
  )
}
