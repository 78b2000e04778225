/**
 * An access check: may this identity do that here, and why. The identity and a group are typed as a person names
 * them (a path of names, or a uid), resolved as every surface resolves them (`@arbor/api`'s `Names`). The decision is
 * the API's own (AuthZEN's evaluation with `explain`), naming the bindings (role, group) that grant it.
 */
import * as Names from "@arbor/api/Names"
import * as AccessEvaluation from "@arbor/core/AccessEvaluation"
import * as Capability from "@arbor/core/Capability"
import * as Effect from "effect/Effect"
import { useState } from "preact/hooks"
import * as Client from "../Client.js"
import { useConnection } from "../Connection.js"
import * as Route from "../Route.js"
import { Choice, Field, Form, Named } from "../ui/components.js"
import { useAction } from "../ui/hooks.js"

export const AccessCheck = () => {
  const { client, session } = useConnection()
  const [capability, setCapability] = useState<string>("groups.list")
  const [type, setType] = useState<AccessEvaluation.ResourceType>("group")
  const [decision, setDecision] = useState<AccessEvaluation.Decision | undefined>(undefined)
  const check = useAction((form: Record<string, string>) => {
    setDecision(undefined)
    const resource = (form.resource ?? "").trim()
    return Client.run(Effect.gen(function*() {
      const identity = yield* Names.identity(client, (form.identity ?? "").trim())
      const id = type === "group" ? yield* Names.group(client, resource) : resource
      return yield* client.decisions.evaluate({
        payload: {
          subject: { type: "identity", id: identity },
          action: { name: capability },
          resource: { type, id },
          context: { explain: true }
        }
      })
    })).then(setDecision)
  })
  return (
    <section>
      <h1>Access check</h1>
      <div class="columns">
        <Form
          title="May this identity do that here?"
          submit="Check"
          busy={check.busy}
          error={check.error}
          onSubmit={check.start}
          keep
        >
          <Field
            label="Identity"
            hint="Its folder's path and its name (acme/platform/deployer), or its uid"
            name="identity"
            required
            autocomplete="off"
            defaultValue={session.identity}
          />
          <Choice
            label="Capability"
            value={capability}
            options={Capability.all.map((c) => [c, c] as const)}
            onChange={setCapability}
          />
          <Choice
            label="Resource type"
            value={type}
            options={AccessEvaluation.resourceTypes.map((t) => [t, t.replace(/_/g, " ")] as const)}
            onChange={(t) => setType(AccessEvaluation.resourceTypes.find((r) => r === t) ?? "group")}
          />
          <Field
            label="Resource"
            hint={type === "group" ? "A folder's path (acme/platform), or its uid" : "Its uid"}
            name="resource"
            required
            autocomplete="off"
          />
        </Form>
        <div aria-live="polite">
          {decision === undefined ? null : (
            <div class={`card decision ${decision.decision ? "allowed" : "denied"}`}>
              <h2>{decision.decision ? "Allowed" : "Denied"}</h2>
              {decision.decision
                ? (
                  <ul>
                    {(decision.grantedBy ?? []).map((g) =>
                      "description" in g
                        ? <li key="unseen">A role binding you cannot see</li>
                        : (
                          <li key={`${g.group}.${g.role}`}>
                            {g.binding === undefined ? "A group mapping" : "A role binding"} of role{" "}
                            <Named kind="role" uid={g.role} /> at{" "}
                            <Named kind="group" uid={g.group} href={Route.href(Route.group(g.group, "bindings"))} />
                          </li>
                        )
                    )}
                  </ul>
                )
                : <p>No binding gives this identity {capability} there.</p>}
            </div>
          )}
        </div>
      </div>
    </section>
  )
}
