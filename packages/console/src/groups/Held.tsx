/**
 * What the signed-in person may do at a group, as the engine decides it (AuthZEN's action search about themselves:
 * every capability they hold there, conditions decided for the request): a form or button is shown only where its
 * capability is held, so no one is offered what can only be refused.
 */
import type { Capability } from "@arbor/core/Capability"
import type { ComponentChildren } from "preact"
import { createContext } from "preact"
import { useContext } from "preact/hooks"
import * as Client from "../Client.js"
import { useConnection } from "../Connection.js"
import { useLoaded } from "../ui/hooks.js"

/**
 * The capabilities held at the page's group; empty until they are known (nothing offered before). Outside a group's
 * page (an identity's bindings, across groups) `"unknown"`: everything is offered and the API decides.
 */
const HeldContext = createContext<ReadonlySet<string> | "unknown">("unknown")

/** The capabilities the signed-in person holds at `group`, for the components below. */
export const HeldAt = ({ children, group }: { readonly group: string; readonly children: ComponentChildren }) => {
  const { client, session } = useConnection()
  const held = useLoaded(
    () =>
      Client.run(client.decisions.searchActions({
        payload: { subject: { type: "identity", id: session.identity }, resource: { type: "group", id: group } }
      })).then((found) => new Set(found.results.map((r) => r.name))),
    [group]
  )
  return <HeldContext.Provider value={held.value ?? new Set()}>{children}</HeldContext.Provider>
}

/** True when the signed-in person holds `capability` at the page's group. */
export const useMay = (capability: Capability): boolean => {
  const held = useContext(HeldContext)
  return held === "unknown" || held.has(capability)
}

/** `children` where the signed-in person holds `capability` at the page's group; nothing elsewhere. */
export const IfMay = (
  { capability, children }: { readonly capability: Capability; readonly children: ComponentChildren }
) => useMay(capability) ? <>{children}</> : null
