/**
 * A group's account association: the cloud accounts it trusts (an AWS account, a Google Cloud project, an Azure
 * tenant), at most one per group; each cloud checked live, and a form that makes or replaces it.
 */
import type { ProviderType } from "@arbor/core/AccountAssociationCheck"
import * as Effect from "effect/Effect"
import { useState } from "preact/hooks"
import * as Client from "../Client.js"
import { useConnection } from "../Connection.js"
import { IfMay } from "../groups/Held.js"
import { DeleteButton, ErrorMessage, Field, Form, NameFields } from "../ui/components.js"
import { useAction, useLoaded } from "../ui/hooks.js"

const clouds: ReadonlyArray<readonly [ProviderType, string]> = [
  ["ACCOUNT_PROVIDER_TYPE_AMAZON", "AWS"],
  ["ACCOUNT_PROVIDER_TYPE_GOOGLE", "Google Cloud"],
  ["ACCOUNT_PROVIDER_TYPE_AZURE", "Azure"]
]

export const Accounts = ({ group }: { readonly group: string }) => {
  const { client } = useConnection()
  const association = useLoaded(
    () =>
      Client.run(
        client.accountAssociations.get({ path: { uid: group } }).pipe(
          // None yet is an answer, not a failure.
          Effect.catchTag("NotFound", () => Effect.succeed(undefined))
        )
      ),
    [group]
  )
  const [checked, setChecked] = useState<string | undefined>(undefined)
  const save = useAction((form: Record<string, string>) => {
    const payload = {
      name: form.name ?? "",
      description: form.description ?? "",
      ...(form.amazon ? { amazon: { account: form.amazon } } : {}),
      ...(form.google ? { google: { projectId: form.google } } : {}),
      ...(form.azure ? { azure: { tenantId: form.azure } } : {})
    }
    return Client.run(
      association.value === undefined
        ? client.accountAssociations.create({ path: { uid: group }, payload })
        : client.accountAssociations.update({ path: { uid: group }, urlParams: { updateMask: "*" }, payload })
    ).then(association.reload)
  })
  const remove = useAction(() =>
    Client.run(client.accountAssociations.delete({ path: { uid: group } })).then(association.reload)
  )
  const check = useAction((providerType: ProviderType, cloud: string) =>
    Client.run(client.accountAssociationChecks.check({ path: { uid: group }, payload: { providerType } })).then(
      (result) =>
        setChecked(
          `${cloud}: ${result.status === "READY" ? "ready" : `not ready (${result.reason})`}${
            result.message === "" ? "" : `: ${result.message}`
          }`
        )
    )
  )
  const current = association.value
  return (
    <div class="columns">
      <div>
        <h2>Cloud accounts</h2>
        <ErrorMessage error={association.error ?? remove.error ?? check.error} />
        {current === undefined
          ? <p class="empty">{association.loading ? "Loading…" : "This group trusts no cloud account."}</p>
          : (
            <div class="card">
              <h3>{current.name}</h3>
              <dl class="facts">
                <dt>AWS account</dt>
                <dd>{current.amazon?.account ?? "none"}</dd>
                <dt>Google Cloud project</dt>
                <dd>{current.google?.projectId ?? "none"}</dd>
                <dt>Azure tenant</dt>
                <dd>{current.azure?.tenantId ?? "none"}</dd>
              </dl>
              <div class="actions">
                {clouds.filter(([type]) =>
                  type === "ACCOUNT_PROVIDER_TYPE_AMAZON"
                    ? current.amazon != null
                    : type === "ACCOUNT_PROVIDER_TYPE_GOOGLE"
                    ? current.google != null
                    : current.azure != null
                ).map(([type, cloud]) => (
                  <button
                    key={type}
                    type="button"
                    disabled={check.busy}
                    onClick={() => void check.start(type, cloud)}
                  >
                    Check {cloud}
                  </button>
                ))}
                <IfMay capability="account_associations.delete">
                  <DeleteButton
                    what="this account association"
                    busy={remove.busy}
                    onDelete={() => void remove.start()}
                  />
                </IfMay>
              </div>
              {checked === undefined ? null : <p role="status">{checked}</p>}
            </div>
          )}
      </div>
      <IfMay capability="account_associations.create">
        <Form
          key={current?.updateTime.epochMillis ?? 0}
          title={current === undefined ? "Trust cloud accounts" : "Change the cloud accounts"}
          submit="Save"
          busy={save.busy}
          error={save.error}
          onSubmit={save.start}
          keep
        >
          <NameFields current={current} />
          <Field label="AWS account id" name="amazon" autocomplete="off" defaultValue={current?.amazon?.account} />
          <Field
            label="Google Cloud project id"
            name="google"
            autocomplete="off"
            defaultValue={current?.google?.projectId}
          />
          <Field label="Azure tenant id" name="azure" autocomplete="off" defaultValue={current?.azure?.tenantId} />
        </Form>
      </IfMay>
    </div>
  )
}
