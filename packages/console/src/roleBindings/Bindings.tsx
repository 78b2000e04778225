/**
 * Role bindings: those made in a group (an identity holding a role there and below), a form for a new one, and the
 * table an identity's page shows too.
 */
import type { RoleBinding } from "@arbor/core/RoleBinding"
import { useState } from "preact/hooks"
import * as Client from "../Client.js"
import { useConnection } from "../Connection.js"
import { IfMay } from "../groups/Held.js"
import { useRoleChoice } from "../roles/RoleChoice.js"
import * as Route from "../Route.js"
import { Choice, DeleteButton, ErrorMessage, Field, Form, ShowMore, Table } from "../ui/components.js"
import { useAction, useLoaded, usePages } from "../ui/hooks.js"

/** How long from now to `at`, as a person says it: "3 h", "12 min", "2 days". */
const span = (millis: number) => {
  const minutes = Math.max(1, Math.round(Math.abs(millis) / 60_000))
  return minutes < 60
    ? `${minutes} min`
    : minutes < 48 * 60
    ? `${Math.round(minutes / 60)} h`
    : `${Math.round(minutes / 1440)} days`
}

/** A binding's window in words: "expires in 3 h", "ended 2 days ago", "starts in 12 min"; nothing for always. */
export const windowOf = (b: RoleBinding, now = Date.now()) =>
  b.expireTime !== null && now >= b.expireTime.epochMillis
    ? `ended ${span(now - b.expireTime.epochMillis)} ago`
    : b.startTime !== null && now < b.startTime.epochMillis
    ? `starts in ${span(b.startTime.epochMillis - now)}`
    : b.expireTime !== null
    ? `expires in ${span(b.expireTime.epochMillis - now)}`
    : ""

/** Bindings as rows: who holds which role, and where or by whom (`show`). */
export const BindingsTable = (props: {
  readonly bindings: ReadonlyArray<RoleBinding>
  readonly loading: boolean
  readonly show: "group" | "identity"
  readonly onDeleted: () => void
}) => {
  const { client, session } = useConnection()
  const remove = useAction((uid: string) =>
    Client.run(client.roleBindings.delete({ path: { uid } })).then(props.onDeleted)
  )
  return (
    <>
      <ErrorMessage error={remove.error} />
      <Table
        caption="Role bindings"
        items={props.bindings}
        keyOf={(b) => b.uid}
        empty={props.loading ? "Loading…" : "No role bindings."}
        columns={[
          props.show === "identity"
            ? ["Identity", (b) => <a href={Route.href({ _tag: "Identity", uid: b.identity.uid })}>{b.identity.name}</a>]
            : ["Group", (b) => <a href={Route.href(Route.group(b.group.uid, "bindings"))}>{b.group.name}</a>],
          ["Role", (b) => b.role.name],
          ["Until", (b) => windowOf(b)],
          ["Only if", (b) =>
            b.condition === null ?
              "" :
              <span title={b.condition.expression}>{b.condition.title || <code>{b.condition.expression}</code>}</span>],
          ["Actions", (b) => (
            <IfMay capability="role_bindings.delete">
              <DeleteButton
                what={`the binding of ${b.identity.name} to ${b.role.name}`}
                warning={b.identity.uid !== session.identity
                  ? undefined
                  : b.role.name === "owner"
                  ? `It is your own owner binding: you lose access to ${b.group.name} and everything below it, ` +
                    "unless another binding gives it to you."
                  : `It is your own: you lose what ${b.role.name} gives you in ${b.group.name} and below.`}
                busy={remove.busy}
                onDelete={() => void remove.start(b.uid)}
              />
            </IfMay>
          )]
        ]}
      />
    </>
  )
}

/** How long a new binding may last, in milliseconds ("" for good). */
const durations: ReadonlyArray<readonly [string, string]> = [
  ["", "Until deleted"],
  [String(3_600_000), "1 hour"],
  [String(8 * 3_600_000), "8 hours"],
  [String(86_400_000), "1 day"],
  [String(7 * 86_400_000), "7 days"],
  [String(30 * 86_400_000), "30 days"]
]

export const Bindings = ({ group }: { readonly group: string }) => {
  const { client } = useConnection()
  const bindings = usePages(
    (pageToken) =>
      Client.run(client.roleBindings.list({ urlParams: { group, pageToken } })).then((page) => ({
        items: page.roleBindings,
        next: page.nextPageToken
      })),
    [group]
  )
  const identities = useLoaded(
    () => Client.run(client.identities.list({ urlParams: { childrenOf: group, orderBy: "name", pageSize: 200 } })),
    [group]
  )
  const role = useRoleChoice()
  const [identity, setIdentity] = useState("")
  const [lasts, setLasts] = useState("")
  const identityChoices = identities.value?.identities ?? []
  // The identity chosen or typed; none is never the first of the list.
  const create = useAction((form: Record<string, string>) => {
    const identityUid = (form.identityUid ?? "").trim() || identity
    return identityUid === ""
      ? Promise.reject(new Error("Choose an identity, or give its uid."))
      : Client.run(client.roleBindings.create({
        path: { uid: group },
        payload: {
          identityUid,
          roleUid: role.chosen(),
          ...(lasts === "" ? {} : { expireTime: new Date(Date.now() + Number(lasts)).toISOString() })
        }
      })).then(bindings.reload)
  })
  return (
    <div class="columns">
      <div>
        <h2>Role bindings in this group</h2>
        <ErrorMessage error={bindings.error} />
        <BindingsTable
          bindings={bindings.items}
          loading={bindings.loading}
          show="identity"
          onDeleted={bindings.reload}
        />
        <ShowMore more={bindings.more} />
      </div>
      <IfMay capability="role_bindings.create">
        <Form title="Bind a role" submit="Bind" busy={create.busy} error={create.error} onSubmit={create.start}>
          <Choice
            label="Identity in this group"
            value={identity}
            options={identityChoices.map((i) => [i.uid, i.name] as const)}
            onChange={setIdentity}
            choose
          />
          <Field
            label="Or any identity's uid"
            name="identityUid"
            autocomplete="off"
            hint="A person's uid, or an identity's in another group"
          />
          {role.field}
          <Choice
            label="For"
            value={lasts}
            options={durations}
            onChange={setLasts}
            hint="It grants nothing after that, and stays listed as ended until deleted."
          />
        </Form>
      </IfMay>
    </div>
  )
}
