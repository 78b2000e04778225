/** An identity: what assumes it, and every role it holds where the person may see the bindings. */
import * as Client from "../Client.js"
import { useConnection } from "../Connection.js"
import { BindingsTable } from "../roleBindings/Bindings.js"
import * as Route from "../Route.js"
import { ErrorMessage, Uid } from "../ui/components.js"
import { useLoaded } from "../ui/hooks.js"

export const IdentityPage = ({ uid }: { readonly uid: string }) => {
  const { client } = useConnection()
  const identity = useLoaded(() => Client.run(client.identities.get({ path: { uid } })), [uid])
  const bindings = useLoaded(
    () => Client.run(client.roleBindings.list({ urlParams: { identity: uid, pageSize: 200 } })),
    [uid]
  )
  const parent = uid.includes("/") ? uid.slice(0, uid.lastIndexOf("/")) : undefined
  return (
    <section>
      <nav aria-label="Breadcrumb" class="crumbs">
        <ol>
          <li>
            <a href="#/">Hierarchy</a>
          </li>
          {parent === undefined ? null : (
            <li>
              <a href={Route.href(Route.group(parent, "identities"))}>Its group</a>
            </li>
          )}
        </ol>
      </nav>
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
      <h2>Role bindings</h2>
      <ErrorMessage error={bindings.error} />
      <BindingsTable
        bindings={bindings.value?.roleBindings ?? []}
        loading={bindings.loading}
        show="group"
        onDeleted={bindings.reload}
      />
    </section>
  )
}
