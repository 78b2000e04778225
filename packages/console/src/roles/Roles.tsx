/**
 * Roles: the built-in ones and those made in a group, and a form for a new one (or for changing one) whose
 * capabilities are picked from every capability the engine knows, by the resource they act on.
 */
import * as Capability from "@arbor/core/Capability"
import type { Role } from "@arbor/core/Role"
import { useState } from "preact/hooks"
import * as Client from "../Client.js"
import { useConnection } from "../Connection.js"
import { IfMay } from "../groups/Held.js"
import { DeleteButton, ErrorMessage, Form, NameFields, ShowMore, Table } from "../ui/components.js"
import { useAction, useLoaded, usePages } from "../ui/hooks.js"

/** Every capability, by what it acts on (`groups.list` under `groups`). */
const byResource: ReadonlyArray<readonly [string, ReadonlyArray<Capability.Capability>]> = [
  ...Capability.all.reduce((groups, capability) => {
    const resource = capability.slice(0, capability.lastIndexOf("."))
    groups.set(resource, [...(groups.get(resource) ?? []), capability])
    return groups
  }, new Map<string, ReadonlyArray<Capability.Capability>>())
]

export const Roles = ({ group }: { readonly group: string }) => {
  const { client } = useConnection()
  const custom = usePages(
    (pageToken) =>
      Client.run(client.roles.list({ urlParams: { childrenOf: group, orderBy: "name", pageToken } })).then(
        (page) => ({ items: page.roles, next: page.nextPageToken })
      ),
    [group]
  )
  const builtIn = useLoaded(
    () => Client.run(client.roles.list({ urlParams: { inRoot: true, orderBy: "name", pageSize: 200 } })),
    []
  )
  // The role being changed, or none: a new one.
  const [editing, setEditing] = useState<Role | undefined>(undefined)
  const save = useAction((form: Record<string, string>) => {
    const payload = {
      name: form.name ?? "",
      description: form.description ?? "",
      capabilities: Capability.all.filter((c) => form[`capability:${c}`] === "on")
    }
    // Said in the form's words, before the API would say `capabilities: must list at least one capability`.
    if (payload.capabilities.length === 0) return Promise.reject(new Error("Choose at least one capability."))
    return Client.run(
      editing === undefined
        ? client.roles.create({ path: { uid: group }, payload })
        : client.roles.update({
          path: { uid: editing.uid },
          urlParams: { updateMask: "name,description,capabilities" },
          payload
        })
    ).then(() => {
      setEditing(undefined)
      custom.reload()
    })
  })
  const remove = useAction((uid: string) => Client.run(client.roles.delete({ path: { uid } })).then(custom.reload))
  return (
    <div class="columns">
      <div>
        <h2>Roles made here</h2>
        <ErrorMessage error={custom.error ?? remove.error} />
        <Table
          caption="Roles made in this group"
          items={custom.items}
          keyOf={(r) => r.uid}
          empty={custom.loading ? "Loading…" : "No custom roles here."}
          columns={[
            ["Name", (r) => r.name],
            ["Capabilities", (r) => r.capabilities.join(", ")],
            ["Actions", (r) => (
              <div class="actions">
                <IfMay capability="roles.update">
                  <button type="button" aria-label={`Change ${r.name}`} onClick={() => setEditing(r)}>Change</button>
                </IfMay>
                <IfMay capability="roles.delete">
                  <DeleteButton what={`role ${r.name}`} busy={remove.busy} onDelete={() => void remove.start(r.uid)} />
                </IfMay>
              </div>
            )]
          ]}
        />
        <ShowMore more={custom.more} />
        <h2>Built-in roles</h2>
        <ErrorMessage error={builtIn.error} />
        <Table
          caption="Built-in roles"
          items={builtIn.value?.roles ?? []}
          keyOf={(r) => r.uid}
          empty={builtIn.loading ? "Loading…" : "None."}
          columns={[["Name", (r) => r.name], ["Description", (r) => r.description]]}
        />
      </div>
      <IfMay capability="roles.create">
        <Form
          key={editing?.uid ?? "new"}
          title={editing === undefined ? "New role" : `Change ${editing.name}`}
          submit={editing === undefined ? "Create role" : "Save role"}
          busy={save.busy}
          error={save.error}
          onSubmit={save.start}
        >
          <NameFields current={editing} />
          {byResource.map(([resource, capabilities]) => (
            <fieldset key={resource} class="capabilities">
              <legend>{resource}</legend>
              {capabilities.map((c) => (
                <label key={c} class="check">
                  <input type="checkbox" name={`capability:${c}`} defaultChecked={editing?.capabilities.includes(c)} />
                  {c.slice(resource.length + 1)}
                </label>
              ))}
            </fieldset>
          ))}
          {editing === undefined ? null : <button type="button" onClick={() => setEditing(undefined)}>Cancel</button>}
        </Form>
      </IfMay>
    </div>
  )
}
