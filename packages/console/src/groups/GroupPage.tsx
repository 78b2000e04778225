/**
 * A group's page: where it sits (its ancestors), its name and description, and its sections, each the resources of
 * one kind in it. A section the person may not read says so in words ("You cannot list invites here.") and the others
 * still work; forms and buttons appear only where the person holds their capability (`Held`).
 */
import type { Capability } from "@arbor/core/Capability"
import type { Group } from "@arbor/core/Group"
import { Accounts } from "../accountAssociations/Accounts.js"
import * as Client from "../Client.js"
import { useConnection } from "../Connection.js"
import { Identities } from "../identities/Identities.js"
import { Providers } from "../identityProviders/Providers.js"
import { Invites } from "../invites/Invites.js"
import { Bindings } from "../roleBindings/Bindings.js"
import { Roles } from "../roles/Roles.js"
import * as Route from "../Route.js"
import { Subscriptions } from "../subscriptions/Subscriptions.js"
import { Breadcrumbs, ErrorMessage, Uid } from "../ui/components.js"
import { useLoaded } from "../ui/hooks.js"
import { Folders } from "./Folders.js"
import { HeldAt, IfMay } from "./Held.js"

/** The capability that lists each section's resources. */
const listedBy: Readonly<Record<Route.Section, Capability>> = {
  folders: "groups.list",
  identities: "identity.list",
  bindings: "role_bindings.list",
  roles: "roles.list",
  invites: "group_invites.list",
  providers: "identity_providers.list",
  accounts: "account_associations.list",
  subscriptions: "subscriptions.list"
}

const Section = ({ group, onChanged, section, uid }: {
  readonly uid: string
  readonly group: Group | undefined
  readonly section: Route.Section
  readonly onChanged: () => void
}) => {
  switch (section) {
    case "folders":
      return <Folders uid={uid} group={group} onChanged={onChanged} />
    case "identities":
      return <Identities group={uid} />
    case "bindings":
      return <Bindings group={uid} />
    case "roles":
      return <Roles group={uid} />
    case "invites":
      return <Invites group={uid} />
    case "providers":
      return <Providers group={uid} />
    case "accounts":
      return <Accounts group={uid} />
    case "subscriptions":
      return <Subscriptions group={uid} />
  }
}

export const GroupPage = ({ uid, section }: { readonly uid: string; readonly section: Route.Section }) => {
  const { client } = useConnection()
  const group = useLoaded(() => Client.run(client.groups.get({ path: { uid } })), [uid])
  const ancestors = useLoaded(
    () => Client.run(client.groups.list({ urlParams: { ancestorsOf: uid, pageSize: 200 } })),
    [uid]
  )
  const path = (ancestors.value?.groups ?? []).filter((g) => g.uid !== uid).sort((a, b) => a.uid.length - b.uid.length)
  return (
    <section>
      <Breadcrumbs trail={path.map((g) => [g.name, Route.href(Route.group(g.uid))] as const)} />
      <h1>{group.value?.name ?? (group.loading ? "…" : "Group")}</h1>
      <ErrorMessage error={group.error} />
      {group.value === undefined ? null : (
        <p class="muted">
          {group.value.description === "" ? null : <>{group.value.description} ·</>}
          <Uid uid={uid} /> · <a href={Route.href({ _tag: "Audit", group: uid })}>Audit trail</a>
        </p>
      )}
      <HeldAt group={uid}>
        <nav aria-label="Sections" class="tabs">
          {Route.sections.map(([name, text]) => (
            // A section the person may not list is not offered (the one asked for by its address still says so).
            <IfMay key={name} capability={listedBy[name]}>
              <a href={Route.href(Route.group(uid, name))} aria-current={name === section ? "page" : undefined}>
                {text}
              </a>
            </IfMay>
          ))}
        </nav>
        <Section uid={uid} group={group.value} section={section} onChanged={group.reload} />
      </HeldAt>
    </section>
  )
}
