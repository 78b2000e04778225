/**
 * The home view: the places the signed-in person holds a role (their own bindings, each a link to its folder), and
 * the organizations they can see whole, as the roots of the tree. One invited to a folder of an organization sees
 * that folder here, not "No folders".
 */
import * as Uid from "@arbor/core/Uid"
import * as Client from "../Client.js"
import { useConnection } from "../Connection.js"
import { windowOf } from "../roleBindings/Bindings.js"
import * as Route from "../Route.js"
import { ErrorMessage, Named, Table } from "../ui/components.js"
import { useLoaded } from "../ui/hooks.js"
import { Level } from "./Tree.js"

/**
 * The folders where the signed-in person holds a role now or later (their own bindings below an organization; those
 * at an organization are its row in the tree), ended ones left out; nothing when there are none.
 */
const Places = () => {
  const { client, session } = useConnection()
  const places = useLoaded(
    () =>
      Client.run(client.roleBindings.list({ urlParams: { identity: session.identity, pageSize: 200 } })).then((page) =>
        page.roleBindings.filter((b) =>
          Uid.parentOrNull(b.group.uid) !== null && (b.expireTime === null || b.expireTime.epochMillis > Date.now())
        )
      ),
    []
  )
  if (places.error !== undefined) return <ErrorMessage error={places.error} />
  if (places.value === undefined || places.value.length === 0) return null
  return (
    <>
      <h2>Where you hold a role</h2>
      <Table
        caption="Folders where you hold a role"
        items={places.value}
        keyOf={(b) => b.uid}
        empty=""
        columns={[
          ["Where", (b) => <Named kind="group" uid={b.group.uid} href={Route.href(Route.group(b.group.uid))} />],
          ["Role", (b) => b.role.name],
          ["Until", (b) => windowOf(b)]
        ]}
      />
    </>
  )
}

export const Hierarchy = () => (
  <section>
    <h1>Hierarchy</h1>
    <Places />
    <h2>Organizations</h2>
    <p class="muted">Organizations you can see whole. Open a row to see its folders; follow a name to manage it.</p>
    <Level
      where={{ inRoot: true }}
      label="Organizations"
      empty="None you can see whole. A role in one of its folders shows that folder above; without one, ask an owner to invite you."
    />
  </section>
)
