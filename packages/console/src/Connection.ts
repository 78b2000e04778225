/** The signed-in person's session and the typed client that calls the API as them, for every view. */
import { createContext } from "preact"
import { useContext } from "preact/hooks"
import type { Client, Reader } from "./Client.js"
import type { Session } from "./Session.js"

/** What every view calls the API with. */
export interface Connection {
  readonly session: Session
  readonly client: Client
  /** Names for the uids a view shows. */
  readonly names: Reader
}

export const ConnectionContext = createContext<Connection | undefined>(undefined)

/** The connection of the signed-in view this component is in. */
export const useConnection = (): Connection => {
  const connection = useContext(ConnectionContext)
  if (connection === undefined) throw new Error("useConnection outside a signed-in view")
  return connection
}
