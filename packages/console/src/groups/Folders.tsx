/** A group's folders (the tree below it), a form for a new one, and the group's own name, description and delete. */
import type { Group } from "@arbor/core/Group"
import * as Uid from "@arbor/core/Uid"
import * as Effect from "effect/Effect"
import { useState } from "preact/hooks"
import * as Client from "../Client.js"
import { useConnection } from "../Connection.js"
import { Level } from "../hierarchy/Tree.js"
import * as Route from "../Route.js"
import { DeleteButton, ErrorMessage, Form, NameFields } from "../ui/components.js"
import { useAction, useLoaded } from "../ui/hooks.js"
import { IfMay } from "./Held.js"

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
  // Back to where the folder was: its parent, or the hierarchy for an organization.
  const parent = Uid.parentOrNull(Uid.unsafeMake(uid))
  const remove = useAction(() =>
    Client.run(client.groups.delete({ path: { uid } })).then(() => {
      location.hash = Route.href(parent === null ? { _tag: "Home" } : Route.group(parent, "folders"))
    })
  )
  // What the folder holds, which must go first: its folders and identities (the server names any other kind).
  const contents = useLoaded(
    () =>
      Client.run(Effect.all([
        client.groups.list({ urlParams: { childrenOf: uid, pageSize: 1 } }),
        client.identities.list({ urlParams: { childrenOf: uid, pageSize: 1 } })
      ])).then(([folders, identities]) =>
        [
          folders.totalCount === 0 ? [] : [`${folders.totalCount} folder${folders.totalCount === 1 ? "" : "s"}`],
          identities.totalCount === 0
            ? []
            : [`${identities.totalCount} identit${identities.totalCount === 1 ? "y" : "ies"}`]
        ].flat()
      ),
    [uid, round]
  )
  const held = contents.value ?? []
  const kind = parent === null ? "organization" : "folder"
  return (
    <div class="columns">
      <div>
        <h2>Folders</h2>
        <Level key={round} where={{ childrenOf: uid }} label="Folders" />
      </div>
      <div>
        <IfMay capability="groups.create">
          <Form
            title="New folder"
            submit="Create folder"
            done="Folder created."
            busy={create.busy}
            error={create.error}
            onSubmit={create.start}
          >
            <NameFields />
          </Form>
        </IfMay>
        <IfMay capability="groups.update">
          <Form
            key={`${group?.name}/${group?.description}`}
            title="Rename"
            submit="Save"
            done="Saved."
            busy={update.busy}
            error={update.error}
            onSubmit={update.start}
            keep
          >
            <NameFields current={group} />
          </Form>
        </IfMay>
        <IfMay capability="groups.delete">
          <div class="card">
            <h3>Delete this {kind}</h3>
            <p class="muted">
              {held.length === 0
                ? `Only an empty ${kind} can be deleted.`
                : `It holds ${held.join(" and ")}: delete or move them first.`}
            </p>
            <ErrorMessage error={remove.error} />
            <DeleteButton
              what={`${kind} ${group?.name ?? ""}`.trim()}
              busy={remove.busy}
              onDelete={() => void remove.start()}
            />
          </div>
        </IfMay>
      </div>
    </div>
  )
}
