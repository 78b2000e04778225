/** The console's frame: signed out, the sign-in page; signed in, the navigation and the view the route names. */
import * as Effect from "effect/Effect"
import { useEffect, useMemo, useState } from "preact/hooks"
import { AccessCheck } from "./access/AccessCheck.js"
import { AuditTrail } from "./audit/AuditTrail.js"
import * as Client from "./Client.js"
import { ConnectionContext, useConnection } from "./Connection.js"
import { ElevationsPage } from "./elevations/Elevations.js"
import { GroupPage } from "./groups/GroupPage.js"
import { Hierarchy } from "./hierarchy/Hierarchy.js"
import { IdentityPage } from "./identities/IdentityPage.js"
import * as Route from "./Route.js"
import * as Session from "./Session.js"
import { SignIn } from "./signIn/SignIn.js"

const View = ({ route }: { readonly route: Route.Route }) => {
  switch (route._tag) {
    case "Home":
      return <Hierarchy />
    case "Group":
      return <GroupPage key={route.uid} uid={route.uid} section={route.section} />
    case "Identity":
      return <IdentityPage key={route.uid} uid={route.uid} />
    case "Audit":
      return <AuditTrail key={route.group ?? ""} group={route.group} />
    case "Access":
      return <AccessCheck />
    case "Elevations":
      return <ElevationsPage />
  }
}

/** Who is signed in: their email, else their identity's path of names (a workload's), the uid in its title. */
const Who = () => {
  const { names, session } = useConnection()
  const [name, setName] = useState<string | undefined>(undefined)
  useEffect(() => {
    if (session.email === undefined) Effect.runPromise(names.identity(session.identity)).then(setName)
  }, [session.identity])
  return <span class="who" title={session.identity}>{session.email ?? name ?? "…"}</span>
}

const links = [
  ["Home", "Hierarchy"],
  ["Audit", "Audit trail"],
  ["Access", "Access check"],
  ["Elevations", "Access requests"]
] as const

export const App = ({ initial }: { readonly initial: ReturnType<typeof Session.initial> }) => {
  const [session, setSession] = useState<Session.Session | undefined>(
    initial !== undefined && "token" in initial ? initial : undefined
  )
  // What the sign-in page says: why a sign-in failed, or that the session ended.
  const [notice, setNotice] = useState(initial !== undefined && "error" in initial ? initial.error : undefined)
  const route = Route.useRoute()
  // A token's end is the session's: then the sign-in page, saying why.
  useEffect(() => {
    if (session === undefined) return
    const timer = setTimeout(() => {
      Session.clear()
      setSession(undefined)
      setNotice("Your session has ended: sign in again.")
    }, Math.min(Math.max(0, session.expiresAt - Date.now()), 2 ** 31 - 1))
    return () => clearTimeout(timer)
  }, [session])
  // A token the server refuses (its signature, a revocation, its end) sends the person back to sign in, saying why.
  useEffect(() =>
    Client.whenTokenRefused((reason) => {
      Session.clear()
      setSession(undefined)
      setNotice(
        `This server no longer accepts your token (${reason.replace(/^Unauthenticated: /, "")}): sign in again.`
      )
    }), [])
  const client = useMemo(() => session === undefined ? undefined : Effect.runSync(Client.make(session.token)), [
    session?.token
  ])
  const names = useMemo(() => client === undefined ? undefined : Client.reader(client), [client])
  if (session === undefined || client === undefined || names === undefined) {
    return (
      <SignIn
        error={notice}
        onSignedIn={setSession}
      />
    )
  }
  return (
    <ConnectionContext.Provider value={{ session, client, names }}>
      <a
        class="skip"
        href="#main"
        onClick={(e) => {
          e.preventDefault()
          document.getElementById("main")?.focus()
        }}
      >
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href="#/">Arbor</a>
        <nav aria-label="Console">
          {links.map(([tag, text]) => (
            <a key={tag} href={Route.href({ _tag: tag })} aria-current={route._tag === tag ? "page" : undefined}>
              {text}
            </a>
          ))}
        </nav>
        <Who />
        <button
          type="button"
          onClick={() => {
            Session.clear()
            setNotice(undefined)
            setSession(undefined)
          }}
        >
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        <View route={route} />
      </main>
    </ConnectionContext.Provider>
  )
}
