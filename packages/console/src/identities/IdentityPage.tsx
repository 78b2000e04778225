/**
 * An identity: what assumes it, every role it holds where the person may see the bindings, its name and description
 * to change, and its delete.
 */
import type { Identity } from "@arbor/core/Identity"
import * as Client from "../Client.js"
import { useConnection } from "../Connection.js"
import { BindingsTable } from "../roleBindings/Bindings.js"
import * as Route from "../Route.js"
import { Breadcrumbs, DeleteButton, ErrorMessage, Form, NameFields, ShowMore, Uid } from "../ui/components.js"
import { useAction, useLoaded, usePages } from "../ui/hooks.js"
import { builderOf } from "./claimMatch.js"
import { useClaimMatchBuilder } from "./ClaimMatchBuilder.js"

/** A workload identity's claim match, rebuilt from any issuer's fields (a person's is their sign-in's, never changed). */
const Assumption = ({ identity, onChanged }: { readonly identity: Identity; readonly onChanged: () => void }) => {
  const { client } = useConnection()
  // An identity the builder made is changed in the builder's terms (a repository and a branch, …).
  const builder = useClaimMatchBuilder(builderOf(identity.claimMatch))
  const change = useAction(() =>
    Client.run(client.identities.update({
      path: { uid: identity.uid },
      urlParams: { updateMask: "claimMatch" },
      payload: { claimMatch: builder.claimMatch }
    })).then(onChanged)
  )
  return (
    <Form title="What assumes it" submit="Save" busy={change.busy} error={change.error} onSubmit={change.start} keep>
      {builder.fields}
    </Form>
  )
}

export const IdentityPage = ({ uid }: { readonly uid: string }) => {
  const { client } = useConnection()
  const identity = useLoaded(() => Client.run(client.identities.get({ path: { uid } })), [uid])
  const bindings = usePages(
    (pageToken) =>
      Client.run(client.roleBindings.list({ urlParams: { identity: uid, pageToken } })).then((page) => ({
        items: page.roleBindings,
        next: page.nextPageToken
      })),
    [uid]
  )
  const parent = uid.includes("/") ? uid.slice(0, uid.lastIndexOf("/")) : undefined
  // The groups it lives in, from its organization down, each by name.
  const groups = useLoaded(
    () =>
      parent === undefined
        ? Promise.resolve([])
        : Client.run(client.groups.list({ urlParams: { ancestorsOf: uid, pageSize: 100 } })).then((page) =>
          [...page.groups].sort((a, b) => a.uid.length - b.uid.length)
        ),
    [uid]
  )
  const update = useAction((form: Record<string, string>) =>
    Client.run(client.identities.update({
      path: { uid },
      urlParams: { updateMask: "name,description" },
      payload: { name: form.name ?? "", description: form.description ?? "" }
    })).then(identity.reload)
  )
  const remove = useAction(() =>
    Client.run(client.identities.delete({ path: { uid } })).then(() => {
      location.hash = parent === undefined
        ? Route.href({ _tag: "Home" })
        : Route.href(Route.group(parent, "identities"))
    })
  )
  return (
    <section>
      <Breadcrumbs
        trail={(groups.value ?? []).map((g) => [g.name, Route.href(Route.group(g.uid, "identities"))] as const)}
      />
      <h1>{identity.value?.name ?? "Identity"}</h1>
      <ErrorMessage error={identity.error} />
      {identity.value === undefined ? null : (
        <dl class="facts">
          <dt>Uid</dt>
          <dd>
            <Uid uid={uid} />
          </dd>
          {identity.value.email === undefined ? null : (
            <>
              <dt>Email</dt>
              <dd>{identity.value.email}</dd>
            </>
          )}
          <dt>Issuer</dt>
          <dd>{identity.value.issuer}</dd>
          <dt>Subject</dt>
          <dd>{identity.value.subject || identity.value.claimMatch?.subjectPattern}</dd>
        </dl>
      )}
      <div class="columns">
        <div>
          <h2>Role bindings</h2>
          <ErrorMessage error={bindings.error} />
          <BindingsTable
            bindings={bindings.items}
            loading={bindings.loading}
            show="group"
            onDeleted={bindings.reload}
          />
          <ShowMore more={bindings.more} />
        </div>
        {identity.value === undefined ? null : (
          <div>
            <Form
              key={identity.value.updateTime.epochMillis}
              title="Rename"
              submit="Save"
              busy={update.busy}
              error={update.error}
              onSubmit={update.start}
              keep
            >
              <NameFields current={identity.value} />
            </Form>
            {identity.value.email === undefined && identity.value.emailUnverified === undefined
              ? (
                <Assumption
                  key={identity.value.updateTime.epochMillis}
                  identity={identity.value}
                  onChanged={identity.reload}
                />
              )
              : null}
            <div class="card">
              <h3>Delete this identity</h3>
              <p class="muted">Its role bindings go with it.</p>
              <ErrorMessage error={remove.error} />
              <DeleteButton
                what={`identity ${identity.value.name}`}
                busy={remove.busy}
                onDelete={() => void remove.start()}
              />
            </div>
          </div>
        )}
      </div>
    </section>
  )
}
