/**
 * What a field takes, checked as it is typed and said in the form's words (the API keeps its own field names and
 * wording). Names and descriptions are checked by the engine's own schemas (`@arbor/core/Validation`); the builders'
 * fields by what their issuers document (GitHub, GitLab, Kubernetes).
 */
import * as Validation from "@arbor/core/Validation"
import * as Schema from "effect/Schema"

/** A field's rule: whether a value is good, and what the field takes, for a person. */
export interface Rule {
  readonly check: (value: string) => boolean
  readonly says: string
}

const matching = (pattern: RegExp, says: string): Rule => ({ check: (value) => pattern.test(value), says })

/** A resource's name. */
export const name: Rule = {
  check: Schema.is(Validation.Name),
  says: "lowercase letters, digits, spaces, dots, underscores and dashes; at most 63, no space at either end"
}

/** A resource's description. */
export const description: Rule = {
  check: Schema.is(Validation.Description),
  says: "at most 512 characters on one line"
}

/** A GitHub repository: its owner and its name. */
export const githubRepository = matching(
  /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/,
  "the owner and the repository, as in acme/app"
)

/** A GitLab project: its group (and subgroups) and its name. */
export const gitlabProject = matching(
  /^[A-Za-z0-9_.-]+(?:\/[A-Za-z0-9_.-]+)+$/,
  "the group (and any subgroups) and the project, as in acme/platform/app"
)

/** A git branch, as a ref names it. */
export const branch = matching(
  /^(?!-)(?!.*\.\.)(?!.*\/\/)[^\s~^:?*[\\]+(?<![./])$/,
  "a branch's name, without spaces, as in main or release/1.2"
)

/** A Kubernetes namespace: a DNS label. */
export const namespace = matching(
  /^[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?$/,
  "lowercase letters, digits and dashes, at most 63, starting and ending with a letter or digit"
)

/** A Kubernetes service account: a DNS subdomain. */
export const serviceAccount = matching(
  /^(?=.{1,253}$)[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*$/,
  "lowercase letters, digits, dashes and dots, at most 253"
)

/** An issuer's address. */
export const issuer: Rule = {
  check: (value) => URL.canParse(value) && ["https:", "http:"].includes(new URL(value).protocol),
  says: "its address, as in https://gitlab.com"
}

/** The seconds in each unit a person may write a duration in (`2 days`, `36h`, `90 min`, `604800s`). */
const units: ReadonlyArray<readonly [RegExp, number]> = [
  [/^(s|sec|secs|second|seconds)$/, 1],
  [/^(m|min|mins|minute|minutes)$/, 60],
  [/^(h|hr|hrs|hour|hours)$/, 3_600],
  [/^(d|day|days)$/, 86_400],
  [/^(w|week|weeks)$/, 604_800]
]

/** A duration as a person writes it, in whole seconds as the API takes it (`"172800s"`); undefined when it is none. */
export const secondsOf = (text: string): string | undefined => {
  const match = /^\s*(\d{1,7})\s*([a-z]+)\s*$/i.exec(text)
  if (match === null) return undefined
  const unit = units.find(([pattern]) => pattern.test(match[2]!.toLowerCase()))
  return unit === undefined ? undefined : `${Number(match[1]) * unit[1]}s`
}

/** A duration: a number and its unit. */
export const duration: Rule = {
  check: (value) => secondsOf(value) !== undefined,
  says: "a number and a unit, as in 2 days, 36 hours or 90 minutes"
}

/** An identity provider's issuer: an https:// address (a provider on this machine may be http://, as the server allows). */
export const providerIssuer: Rule = {
  check: (value) =>
    URL.canParse(value) &&
    (new URL(value).protocol === "https:" ||
      (new URL(value).protocol === "http:" && ["localhost", "127.0.0.1", "[::1]"].includes(new URL(value).hostname))),
  says: "the provider's https:// address, as in https://accounts.google.com"
}
