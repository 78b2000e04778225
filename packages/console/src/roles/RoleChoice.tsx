/** Picking a role: the roles the signed-in person can see (built-in and custom), by name. */
import { useState } from "preact/hooks"
import * as Client from "../Client.js"
import { useConnection } from "../Connection.js"
import { Choice, ErrorMessage } from "../ui/components.js"
import { useLoaded } from "../ui/hooks.js"

/**
 * The roles the person can see: the uid of the one picked (the first until one is), the name of any, and the labelled
 * choice to put in a form.
 */
export const useRoleChoice = (label = "Role") => {
  const { client } = useConnection()
  const roles = useLoaded(() => Client.run(client.roles.list({ urlParams: { orderBy: "name", pageSize: 200 } })), [])
  const [picked, setPicked] = useState("")
  const all = roles.value?.roles ?? []
  return {
    chosen: () => picked || all[0]?.uid || "",
    nameOf: (uid: string) => all.find((r) => r.uid === uid)?.name,
    field: (
      <>
        <ErrorMessage error={roles.error} />
        <Choice label={label} value={picked} options={all.map((r) => [r.uid, r.name] as const)} onChange={setPicked} />
      </>
    )
  }
}
