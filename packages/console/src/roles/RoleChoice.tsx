/** Picking a role: the roles the signed-in person can see (built-in and custom), by name. */
import { useEffect, useState } from "preact/hooks"
import * as Client from "../Client.js"
import { useConnection } from "../Connection.js"
import { Choice, ErrorMessage } from "../ui/components.js"
import { useLoaded } from "../ui/hooks.js"

/**
 * The roles the person can see, to grant one: the uid of the one picked (`current`, what is being changed, until
 * another is; else none: it starts on "Choose…" and its form is not sent without a choice), the name of any, and the
 * labelled choice to put in a form, which shows what the chosen role grants.
 */
export const useRoleChoice = (label = "Role", current?: string) => {
  const { client } = useConnection()
  const roles = useLoaded(() => Client.run(client.roles.list({ urlParams: { orderBy: "name", pageSize: 200 } })), [])
  const [picked, setPicked] = useState("")
  // What is being changed has its own role until another is picked.
  useEffect(() => setPicked(""), [current])
  const all = roles.value?.roles ?? []
  const value = picked || current || ""
  const grants = all.find((r) => r.uid === value)?.capabilities
  return {
    chosen: () => value,
    nameOf: (uid: string) => all.find((r) => r.uid === uid)?.name,
    field: (
      <>
        <ErrorMessage error={roles.error} />
        <Choice
          label={label}
          value={value}
          options={all.map((r) => [r.uid, r.name] as const)}
          onChange={setPicked}
          choose
          required
          hint={grants === undefined ? undefined : `Grants ${grants.join(", ")}`}
        />
      </>
    )
  }
}
