/** Picking a role: the roles the signed-in person can see (built-in and custom), by name. */
import { useEffect, useState } from "preact/hooks"
import * as Client from "../Client.js"
import { useConnection } from "../Connection.js"
import { Choice, ErrorMessage } from "../ui/components.js"
import { useLoaded } from "../ui/hooks.js"

/**
 * The roles the person can see: the uid of the one picked (`current` until one is, else the first), the name of
 * any, and the labelled choice to put in a form.
 */
export const useRoleChoice = (label = "Role", current?: string) => {
  const { client } = useConnection()
  const roles = useLoaded(() => Client.run(client.roles.list({ urlParams: { orderBy: "name", pageSize: 200 } })), [])
  const [picked, setPicked] = useState("")
  // What is being changed has its own role until another is picked.
  useEffect(() => setPicked(""), [current])
  const all = roles.value?.roles ?? []
  const value = picked || current || ""
  return {
    chosen: () => value || all[0]?.uid || "",
    nameOf: (uid: string) => all.find((r) => r.uid === uid)?.name,
    field: (
      <>
        <ErrorMessage error={roles.error} />
        <Choice label={label} value={value} options={all.map((r) => [r.uid, r.name] as const)} onChange={setPicked} />
      </>
    )
  }
}
