/**
 * The claim matches of the usual workloads, built from what a person knows of them (a repository and a branch, a
 * namespace and a service account) in the subject formats their issuers document. The server checks the result.
 */
import type { ClaimMatchInput } from "@arbor/core/ClaimMatch"
import * as Rules from "../ui/rules.js"

/**
 * The workloads the builder knows, and the fields each asks for: name, label, hint, the rule it is checked by, and
 * whether it may be left empty (`"optional"`).
 */
export const kinds = {
  github: {
    title: "GitHub Actions",
    fields: [
      ["repository", "Repository", "owner/name, e.g. acme/app", Rules.githubRepository],
      ["branch", "Branch", "e.g. main; empty for every ref of the repository", Rules.branch, "optional"]
    ]
  },
  gitlab: {
    title: "GitLab CI",
    fields: [
      ["issuer", "GitLab address", "https://gitlab.com (when empty), or your instance's", Rules.issuer, "optional"],
      ["project", "Project path", "group/project", Rules.gitlabProject],
      ["branch", "Branch", "e.g. main; empty for every ref of the project", Rules.branch, "optional"]
    ]
  },
  kubernetes: {
    title: "Kubernetes service account",
    fields: [
      ["issuer", "Cluster issuer", "the cluster's service-account issuer URL", Rules.issuer],
      ["namespace", "Namespace", "e.g. default", Rules.namespace],
      ["serviceAccount", "Service account", "e.g. deployer", Rules.serviceAccount]
    ]
  },
  custom: {
    title: "Any OIDC issuer",
    fields: [
      ["issuer", "Issuer", "the token's iss, an https:// URL", Rules.issuer],
      ["subject", "Subject", "the token's sub (or a subject pattern below)", undefined, "optional"],
      [
        "subjectPattern",
        "Subject pattern",
        "an RE2 pattern the token's sub matches, instead of a subject",
        undefined,
        "optional"
      ],
      ["audience", "Audience", "the token's aud (optional)", undefined, "optional"]
    ]
  }
} as const

export type Kind = keyof typeof kinds

/** True when `name` names a kind of workload the builder knows. */
export const isKind = (name: string): name is Kind => Object.hasOwn(kinds, name)

/** A claim match as the API takes it. */
export type ClaimMatch = typeof ClaimMatchInput.Encoded

/** Escapes `text` for use inside an RE2 pattern. */
const literal = (text: string) => text.replace(/[\\^$.|?*+()[\]{}]/g, "\\$&")

const given = (values: Readonly<Record<string, string>>, name: string) => (values[name] ?? "").trim()

/** The claim match of a workload of `kind` described by `values` (by the kind's field names). */
export const claimMatchOf = (kind: Kind, values: Readonly<Record<string, string>>): ClaimMatch => {
  switch (kind) {
    case "github": {
      const repository = given(values, "repository")
      const branch = given(values, "branch")
      return {
        issuer: "https://token.actions.githubusercontent.com",
        ...(branch === ""
          ? { subjectPattern: `repo:${literal(repository)}:.+` }
          : { subject: `repo:${repository}:ref:refs/heads/${branch}` })
      }
    }
    case "gitlab": {
      const project = given(values, "project")
      const branch = given(values, "branch")
      return {
        issuer: given(values, "issuer").replace(/\/+$/, "") || "https://gitlab.com",
        ...(branch === ""
          ? { subjectPattern: `project_path:${literal(project)}:.+` }
          : { subject: `project_path:${project}:ref_type:branch:ref:${branch}` })
      }
    }
    case "kubernetes":
      return {
        issuer: given(values, "issuer"),
        subject: `system:serviceaccount:${given(values, "namespace")}:${given(values, "serviceAccount")}`
      }
    case "custom": {
      const audience = given(values, "audience")
      const subjectPattern = given(values, "subjectPattern")
      return {
        issuer: given(values, "issuer"),
        ...(subjectPattern === "" ? { subject: given(values, "subject") } : { subjectPattern }),
        ...(audience === "" ? {} : { audience })
      }
    }
  }
}

/** A literal `literal` wrote, read back. */
const unliteral = (pattern: string) => pattern.replace(/\\(.)/g, "$1")

/**
 * The builder's kind and fields that make `claimMatch`, when one of the usual workloads' does (an identity made by the
 * builder is changed in its terms); otherwise its issuer, subject and audience as they are.
 */
export const builderOf = (
  claimMatch: ClaimMatch | undefined
): { readonly kind: Kind; readonly values: Readonly<Record<string, string>> } => {
  const issuer = claimMatch?.issuer ?? ""
  const subject = claimMatch?.subject ?? ""
  const pattern = claimMatch?.subjectPattern ?? ""
  const plain = claimMatch !== undefined && claimMatch.audience === undefined
  const github = /^repo:([^:]+):ref:refs\/heads\/(.+)$/.exec(subject) ?? /^repo:(.+):\.\+$/.exec(pattern)
  if (plain && issuer === "https://token.actions.githubusercontent.com" && github !== null) {
    return { kind: "github", values: { repository: unliteral(github[1]!), branch: github[2] ?? "" } }
  }
  const gitlab = /^project_path:([^:]+):ref_type:branch:ref:(.+)$/.exec(subject) ??
    /^project_path:(.+):\.\+$/.exec(pattern)
  if (plain && gitlab !== null) {
    return { kind: "gitlab", values: { issuer, project: unliteral(gitlab[1]!), branch: gitlab[2] ?? "" } }
  }
  const kubernetes = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(subject)
  if (plain && kubernetes !== null) {
    return { kind: "kubernetes", values: { issuer, namespace: kubernetes[1]!, serviceAccount: kubernetes[2]! } }
  }
  return { kind: "custom", values: { issuer, subject, subjectPattern: pattern, audience: claimMatch?.audience ?? "" } }
}
