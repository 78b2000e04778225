/**
 * A group's identity providers (where its people sign in), a form for a new one, and for each: the group mappings
 * that give roles to the provider's groups at sign-in, and its SCIM provisioning (on or off, and a token shown once).
 */
import type { IdentityProvider } from "@arbor/core/IdentityProvider"
import { useState } from "preact/hooks"
import * as Client from "../Client.js"
import { useConnection } from "../Connection.js"
import { IfMay } from "../groups/Held.js"
import { useRoleChoice } from "../roles/RoleChoice.js"
import { CopyButton, DeleteButton, ErrorMessage, Field, Form, NameFields, ShowMore, Table } from "../ui/components.js"
import { useAction, useLoaded, usePages } from "../ui/hooks.js"
import * as Rules from "../ui/rules.js"

const Mappings = ({ provider }: { readonly provider: IdentityProvider }) => {
  const { client } = useConnection()
  const role = useRoleChoice()
  const list = useLoaded(
    () =>
      Client.run(client.externalGroupRoleMappings.list({
        urlParams: { identityProviderUid: provider.uid, pageSize: 200 }
      })),
    [provider.uid]
  )
  const create = useAction((form: Record<string, string>) =>
    Client.run(client.externalGroupRoleMappings.create({
      path: { uid: provider.uid },
      payload: { externalGroupId: form.externalGroupId ?? "", roleUid: role.chosen() }
    })).then(list.reload)
  )
  const remove = useAction((uid: string) =>
    Client.run(client.externalGroupRoleMappings.delete({ path: { uid } })).then(list.reload)
  )
  return (
    <div>
      <h4>Group mappings</h4>
      <ErrorMessage error={list.error ?? remove.error} />
      <Table
        caption={`Group mappings of ${provider.name}`}
        items={list.value?.externalGroupRoleMappings ?? []}
        keyOf={(m) => m.uid}
        empty={list.loading ? "Loading…" : "No group mappings."}
        columns={[
          ["Provider's group", (m) => m.externalGroupId],
          ["Role", (m) => role.nameOf(m.roleUid) ?? m.roleUid],
          ["Actions", (m) => (
            <DeleteButton
              what="this mapping"
              busy={remove.busy}
              onDelete={() => void remove.start(m.uid)}
            />
          )]
        ]}
      />
      <Form title="New group mapping" submit="Map" busy={create.busy} error={create.error} onSubmit={create.start}>
        <Field label="Provider's group" name="externalGroupId" required autocomplete="off" />
        {role.field}
      </Form>
    </div>
  )
}

const Scim = ({ provider }: { readonly provider: IdentityProvider }) => {
  const { client } = useConnection()
  const status = useLoaded(
    () => Client.run(client.identityProviders.get({ path: { uid: provider.uid } })).then((p) => p.scim),
    [provider.uid]
  )
  const [token, setToken] = useState<string | undefined>(undefined)
  const toggle = useAction((enabled: boolean, etag: string) =>
    Client.run(client.scimCredentials.setEnabled({ path: { uid: provider.uid }, payload: { enabled, etag } }))
      .then(status.reload)
  )
  const generate = useAction(() =>
    Client.run(client.scimCredentials.generate({ path: { uid: provider.uid }, payload: {} })).then((issued) => {
      setToken(issued.token)
      status.reload()
    })
  )
  const regenerate = useAction((etag: string) =>
    Client.run(client.scimCredentials.regenerate({ path: { uid: provider.uid }, payload: { etag } })).then(
      (issued) => {
        setToken(issued.token)
        status.reload()
      }
    )
  )
  const revoke = useAction(() =>
    Client.run(client.scimCredentials.revoke({ path: { uid: provider.uid }, payload: {} })).then(status.reload)
  )
  const scim = status.value
  return (
    <div>
      <h4>SCIM provisioning</h4>
      <ErrorMessage error={status.error ?? toggle.error ?? generate.error ?? regenerate.error ?? revoke.error} />
      {scim === undefined ? null : (
        <>
          <p>
            {scim.enabled ? "On" : "Off"} · token {scim.credentialState.toLowerCase().replace(/_/g, " ")} · endpoint
            {" "}
            <code>{scim.endpointUrl}</code>
          </p>
          <IfMay capability="identity_providers.scim.manage">
            <div class="actions">
              <button type="button" disabled={toggle.busy} onClick={() => void toggle.start(!scim.enabled, scim.etag)}>
                {scim.enabled ? "Turn SCIM off" : "Turn SCIM on"}
              </button>
              {scim.credentialState === "NOT_ISSUED"
                ? (
                  <button type="button" disabled={generate.busy} onClick={() => void generate.start()}>
                    Generate a token
                  </button>
                )
                : (
                  <>
                    <button type="button" disabled={regenerate.busy} onClick={() => void regenerate.start(scim.etag)}>
                      Replace the token
                    </button>
                    <button type="button" class="danger" disabled={revoke.busy} onClick={() => void revoke.start()}>
                      Revoke the tokens
                    </button>
                  </>
                )}
            </div>
          </IfMay>
        </>
      )}
      {token === undefined ? null : (
        <div class="card notice" role="status">
          <p>The SCIM token, shown this once: give it to the provider's SCIM client.</p>
          <pre class="code" aria-label="SCIM token">{token}</pre>
          <CopyButton text={token} label="Copy the token" />
        </div>
      )}
    </div>
  )
}

export const Providers = ({ group }: { readonly group: string }) => {
  const { client } = useConnection()
  const list = usePages(
    (pageToken) =>
      Client.run(client.identityProviders.list({ urlParams: { childrenOf: group, orderBy: "name", pageToken } })).then(
        (page) => ({ items: page.identityProviders, next: page.nextPageToken })
      ),
    [group]
  )
  // The provider being changed, or none: a new one.
  const [editing, setEditing] = useState<IdentityProvider | undefined>(undefined)
  const role = useRoleChoice("Default role", editing?.defaultRole)
  const [open, setOpen] = useState<string | undefined>(undefined)
  const save = useAction((form: Record<string, string>) => {
    const oidc = {
      issuer: form.issuer ?? "",
      clientId: form.clientId ?? "",
      groupsClaim: form.groupsClaim ?? ""
    }
    const base = { name: form.name ?? "", description: form.description ?? "", defaultRole: role.chosen() }
    return Client.run(
      editing === undefined
        ? client.identityProviders.create({
          path: { uid: group },
          payload: { ...base, oidc: { ...oidc, clientSecret: form.clientSecret ?? "" } }
        })
        : client.identityProviders.update({
          path: { uid: editing.uid },
          urlParams: { updateMask: "name,description,defaultRole,oidc" },
          // Without a new secret, the stored one stays.
          payload: { ...base, oidc: form.clientSecret ? { ...oidc, clientSecret: form.clientSecret } : oidc }
        })
    ).then(() => {
      setEditing(undefined)
      list.reload()
    })
  })
  const remove = useAction((uid: string) =>
    Client.run(client.identityProviders.delete({ path: { uid } })).then(list.reload)
  )
  const providers = list.items
  return (
    <div class="columns">
      <div>
        <h2>Identity providers</h2>
        <ErrorMessage error={list.error ?? remove.error} />
        <Table
          caption="Identity providers of this group"
          items={providers}
          keyOf={(p) => p.uid}
          empty={list.loading ? "Loading…" : "No identity providers here."}
          columns={[
            ["Name", (p) => p.name],
            ["Issuer", (p) => p.oidc.issuer],
            ["Manage", (p) => (
              <button
                type="button"
                aria-expanded={open === p.uid}
                onClick={() => setOpen(open === p.uid ? undefined : p.uid)}
              >
                Mappings and SCIM
              </button>
            )],
            ["Actions", (p) => (
              <div class="actions">
                <IfMay capability="identity_providers.update">
                  <button type="button" aria-label={`Change ${p.name}`} onClick={() => setEditing(p)}>Change</button>
                </IfMay>
                <IfMay capability="identity_providers.delete">
                  <DeleteButton
                    what={`identity provider ${p.name}`}
                    busy={remove.busy}
                    onDelete={() => void remove.start(p.uid)}
                  />
                </IfMay>
              </div>
            )]
          ]}
        />
        <ShowMore more={list.more} />
        {providers.filter((p) => p.uid === open).map((p) => (
          <section key={p.uid} class="card" aria-label={`${p.name}: mappings and SCIM`}>
            <h3>{p.name}</h3>
            <Mappings provider={p} />
            <Scim provider={p} />
          </section>
        ))}
      </div>
      <IfMay capability="identity_providers.create">
        <Form
          key={editing?.uid ?? "new"}
          title={editing === undefined ? "New identity provider" : `Change ${editing.name}`}
          submit={editing === undefined ? "Create provider" : "Save provider"}
          busy={save.busy}
          error={save.error}
          onSubmit={save.start}
        >
          <NameFields current={editing} />
          <Field
            label="Issuer"
            name="issuer"
            required
            autocomplete="off"
            rule={Rules.providerIssuer}
            placeholder="https://…"
            defaultValue={editing?.oidc.issuer}
          />
          <Field label="Client id" name="clientId" required autocomplete="off" defaultValue={editing?.oidc.clientId} />
          <Field
            label="Client secret"
            name="clientSecret"
            type="password"
            autocomplete="off"
            hint={editing === undefined ? undefined : "Empty keeps the current secret"}
          />
          <Field
            label="Groups claim"
            name="groupsClaim"
            autocomplete="off"
            hint="The claim that lists a person's groups (optional)"
            defaultValue={editing?.oidc.groupsClaim}
          />
          {role.field}
          {editing === undefined ? null : <button type="button" onClick={() => setEditing(undefined)}>Cancel</button>}
        </Form>
      </IfMay>
    </div>
  )
}
