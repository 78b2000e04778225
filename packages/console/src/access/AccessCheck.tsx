/**
 * An access check: may this identity do that here, and why. The decision is the API's own (AuthZEN's evaluation
 * with `explain`), naming the bindings (group, role) that grant it.
 */
import * as AccessEvaluation from "@arbor/core/AccessEvaluation"
import * as Capability from "@arbor/core/Capability"
import { useState } from "preact/hooks"
import * as Client from "../Client.js"
import { useConnection } from "../Connection.js"
import { useRoleChoice } from "../roles/RoleChoice.js"
import * as Route from "../Route.js"
import { Choice, Field, Form, Uid } from "../ui/components.js"
import { useAction } from "../ui/hooks.js"

export const AccessCheck = () => {
  const { client, session } = useConnection()
  const [capability, setCapability] = useState<string>("groups.list")
  const [type, setType] = useState<AccessEvaluation.ResourceType>("group")
  const [decision, setDecision] = useState<AccessEvaluation.Decision | undefined>(undefined)
  const roles = useRoleChoice()
  const check = useAction((form: Record<string, string>) => {
    setDecision(undefined)
    return Client.run(client.decisions.evaluate({
      payload: {
        subject: { type: "identity", id: (form.identity ?? "").trim() },
        action: { name: capability },
        resource: { type, id: (form.resource ?? "").trim() },
        context: { explain: true }
      }
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
          <Field label="Identity (uid)" name="identity" required autocomplete="off" defaultValue={session.identity} />
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
          <Field label="Resource (uid)" name="resource" required autocomplete="off" />
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
                            {roles.nameOf(g.role) ?? <Uid uid={g.role} />} at{" "}
                            <a href={Route.href(Route.group(g.group, "bindings"))}>
                              <Uid uid={g.group} />
                            </a>
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
