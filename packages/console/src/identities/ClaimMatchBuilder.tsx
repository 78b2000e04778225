/** The fields that build a claim match (`claimMatch.ts`) for a form, and the claim match they make, shown as sent. */
import { useState } from "preact/hooks"
import { Choice, Field } from "../ui/components.js"
import { claimMatchOf, isKind, type Kind, kinds } from "./claimMatch.js"

/** A builder starting from `initial` (a GitHub Actions workflow by default). */
export const useClaimMatchBuilder = (
  initial: { readonly kind: Kind; readonly values: Readonly<Record<string, string>> } = { kind: "github", values: {} }
) => {
  const [kind, setKind] = useState<Kind>(initial.kind)
  const [values, setValues] = useState<Readonly<Record<string, string>>>(initial.values)
  const claimMatch = claimMatchOf(kind, values)
  return {
    claimMatch,
    fields: (
      <>
        <Choice
          label="Assumed by"
          value={kind}
          options={Object.entries(kinds).map(([k, v]) => [k, v.title] as const)}
          onChange={(k) => isKind(k) && setKind(k)}
        />
        {kinds[kind].fields.map(([name, label, hint, rule, optional]) => (
          <Field
            key={`${kind}.${name}`}
            label={label}
            hint={hint}
            rule={rule}
            required={optional !== "optional"}
            value={values[name] ?? ""}
            autocomplete="off"
            onInput={(e: Event) => setValues({ ...values, [name]: (e.currentTarget as HTMLInputElement).value })}
          />
        ))}
        <p class="muted">Claim match sent:</p>
        <pre class="preview" aria-label="Claim match">{JSON.stringify(claimMatch, null, 2)}</pre>
      </>
    )
  }
}
