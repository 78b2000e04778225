/**
 * Signing in: through the server's provider (the server runs the flow and hands the console its token), or by
 * pasting an API token (`arbor auth token`, a workload's, the bootstrap token).
 */
import { useState } from "preact/hooks"
import * as Session from "../Session.js"
import { ErrorMessage, Field } from "../ui/components.js"

/** Whether the server has a sign-in provider of its own, as its page says (`<meta name="arbor-sign-in">`). */
const serverProvider = () => document.querySelector<HTMLMetaElement>("meta[name=arbor-sign-in]")?.content !== "token"

export const SignIn = (props: {
  readonly error: string | undefined
  readonly onSignedIn: (session: Session.Session) => void
}) => {
  const [error, setError] = useState(props.error)
  const withProvider = serverProvider()
  const provider = (
    <form
      class="card"
      aria-label={withProvider ? "Sign in with your identity provider" : "Sign in with your organization's provider"}
      onSubmit={(e) => {
        e.preventDefault()
        // A navigation, not a form submission: the policy's form-action would refuse the provider's redirect.
        const form = new FormData(e.currentTarget)
        const params = new URLSearchParams({ exit: "console" })
        for (const name of ["idp_id", "invite"]) {
          const value = String(form.get(name) ?? "").trim()
          if (value !== "") params.set(name, value)
        }
        Session.begin(params)
      }}
    >
      <h2>{withProvider ? "With your identity provider" : "With your organization's identity provider"}</h2>
      <p>
        {withProvider
          ? "Sign in through the provider this server trusts; you come back here signed in."
          : "This server has no sign-in provider of its own; an organization may have one."}
      </p>
      <Field
        label="Organization"
        name="idp_id"
        autocomplete="organization"
        required={!withProvider}
        hint={withProvider
          ? "To sign in through your organization's own identity provider: its name (optional)."
          : "Your organization's name."}
      />
      <Field
        label="Invite code"
        name="invite"
        autocomplete="off"
        spellcheck={false}
        hint="If someone invited you: their code binds you to the role they chose (optional)."
      />
      <button type="submit" class={withProvider ? "primary" : undefined}>Sign in</button>
    </form>
  )
  const token = (
    <form
      class="card"
      aria-label="Sign in with an API token"
      onSubmit={(e) => {
        e.preventDefault()
        const token = String(new FormData(e.currentTarget).get("token") ?? "")
        const session = Session.fromToken(token)
        if (typeof session === "string") return setError(session)
        Session.save(session)
        props.onSignedIn(session)
      }}
    >
      <h2>With an API token</h2>
      <div class="field">
        <label for="token">API token</label>
        <textarea
          id="token"
          name="token"
          rows={4}
          required
          autocomplete="off"
          spellcheck={false}
          aria-describedby="token-hint"
        />
        <small id="token-hint">
          For example what <code>arbor auth token</code> prints. It stays in this tab only.
        </small>
      </div>
      <button type="submit" class="primary">Use this token</button>
    </form>
  )
  return (
    <main id="main" class="sign-in">
      <h1>Sign in to Arbor</h1>
      <ErrorMessage error={error} />
      {withProvider ? provider : token}
      {withProvider ? token : provider}
    </main>
  )
}
