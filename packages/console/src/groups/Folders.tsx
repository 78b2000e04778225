/** A group's folders (the tree below it), a form for a new one, and the group's own name, description and delete. */
import type { Group } from "@arbor/core/Group"
import { useState } from "preact/hooks"
import * as Client from "../Client.js"
import { useConnection } from "../Connection.js"
import { Level } from "../hierarchy/Tree.js"
import * as Route from "../Route.js"
import { DeleteButton, ErrorMessage, Field, Form } from "../ui/components.js"
import { useAction } from "../ui/hooks.js"
import * as Rules from "../ui/rules.js"

export const Folders = ({ group, onChanged, uid }: {
  readonly uid: string
  readonly group: Group | undefined
  readonly onChanged: () => void
}) => {
  const { client } = useConnection()
  // Bumped after a folder is made, so the tree below shows it.
  const [round, setRound] = useState(0)
  const create = useAction((values: Record<string, string>) =>
    Client.run(client.groups.create({
      path: { uid },
      payload: { name: values.name ?? "", description: values.description ?? "" }
    })).then(() => setRound((r) => r + 1))
  )
  const update = useAction((values: Record<string, string>) =>
    Client.run(client.groups.update({
      path: { uid },
      urlParams: { updateMask: "name,description" },
      payload: { name: values.name ?? "", description: values.description ?? "" }
    })).then(onChanged)
  )
  const remove = useAction(() =>
    Client.run(client.groups.delete({ path: { uid } })).then(() => {
      location.hash = Route.href({ _tag: "Home" })
    })
  )
  return (
    <div class="columns">
      <div>
        <h2>Folders</h2>
        <Level key={round} where={{ childrenOf: uid }} label="Folders" />
      </div>
      <div>
        <Form title="New folder" submit="Create folder" busy={create.busy} error={create.error} onSubmit={create.start}>
          <Field label="Name" rule={Rules.name} name="name" required autocomplete="off" />
          <Field label="Description" rule={Rules.description} name="description" autocomplete="off" />
        </Form>
        <Form
          key={`${group?.name}/${group?.description}`}
          title="Rename"
          submit="Save"
          busy={update.busy}
          error={update.error}
          onSubmit={update.start}
          keep
        >
          <Field label="Name" rule={Rules.name} name="name" required autocomplete="off" defaultValue={group?.name} />
          <Field
            label="Description"
            rule={Rules.description}
            name="description"
            autocomplete="off"
            defaultValue={group?.description}
          />
        </Form>
        <div class="card">
          <h3>Delete this group</h3>
          <p class="muted">Only an empty group can be deleted.</p>
          <ErrorMessage error={remove.error} />
          <DeleteButton what="this group" busy={remove.busy} onDelete={() => void remove.start()} />
        </div>
      </div>
    </div>
  )
}
