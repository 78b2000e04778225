/**
 * `arbor iam identities`: what workloads and people are. `create github|gitlab|kubernetes|generic` build the claim
 * match from flags, checked before anything is sent.
 */
import { Wire } from "@arbor/api"
import * as Resources from "@arbor/api/Resources"
import type { Identity } from "@arbor/core/Identity"
import type { IdentityMetadata } from "@arbor/core/IdentityMetadata"
import * as Uid from "@arbor/core/Uid"
import { Args, Command, Options } from "@effect/cli"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { UsageError } from "../../Failure.js"
import * as Help from "../../Help.js"
import type * as Output from "../../Output.js"
import {
  common,
  connect,
  description,
  given,
  nameArg,
  output,
  parent,
  print,
  printRows,
  resolveGroup,
  resolveIdentity,
  time
} from "../shared.js"
import * as Resource from "./resource.js"

const identityShape: Output.Shape<Identity> = {
  json: Wire.Identity.v2,
  columns: [
    { heading: "NAME", value: (i) => i.name },
    { heading: "UID", value: (i) => i.uid },
    {
      heading: "ISSUER",
      value: (i) => i.claimMatch?.issuer ?? i.claimMatch?.issuerPattern ?? i.staticKeys?.issuer ?? ""
    },
    {
      heading: "SUBJECT",
      value: (i) => i.claimMatch?.subject ?? i.claimMatch?.subjectPattern ?? i.staticKeys?.subject ?? ""
    },
    { heading: "DESCRIPTION", value: (i) => i.description, wide: true },
    { heading: "LAST SEEN", value: (i) => time(i.lastSeenTime), wide: true }
  ]
}

/** What `create github|gitlab|kubernetes|generic` turn their flags into. */
type ClaimMatch = Record<string, unknown>

const audience = Options.text("audience").pipe(
  Options.withDescription("the audience the workload's token is issued for (default: the token service's address)"),
  Options.optional
)

const withAudience = (match: ClaimMatch, aud: Option.Option<string>): ClaimMatch =>
  Option.isSome(aud) ? { ...match, audience: aud.value } : match

const githubIssuer = "https://token.actions.githubusercontent.com"

/** Claim-match builders: each kind's flags, checked before anything is sent. */
const kinds = {
  github: {
    flags: {
      repo: Options.text("github-repo").pipe(Options.withDescription("the repository, OWNER/REPO")),
      ref: Options.text("github-ref").pipe(
        Options.withDescription("a branch or tag ref, e.g. refs/heads/main"),
        Options.optional
      ),
      environment: Options.text("github-environment").pipe(
        Options.withDescription("a deployment environment"),
        Options.optional
      ),
      audience
    },
    description: "a GitHub Actions workflow of a repository (on a ref or in an environment, else any of its jobs)",
    example:
      "arbor iam identities create github deployer --parent acme --github-repo acme/app --github-ref refs/heads/main",
    build: (
      f: {
        repo: string
        ref: Option.Option<string>
        environment: Option.Option<string>
        audience: Option.Option<string>
      }
    ) =>
      Effect.gen(function*() {
        if (!/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/.test(f.repo)) {
          return yield* new UsageError({ message: `--github-repo ${f.repo} is not OWNER/REPO` })
        }
        if (Option.isSome(f.ref) && Option.isSome(f.environment)) {
          return yield* new UsageError({ message: "give --github-ref or --github-environment, not both" })
        }
        if (Option.isSome(f.ref) && !/^refs\/(heads|tags)\/\S+$/.test(f.ref.value)) {
          return yield* new UsageError({ message: `--github-ref ${f.ref.value} is not refs/heads/… or refs/tags/…` })
        }
        const escape = (s: string) => s.replace(/:/g, "%3A")
        const base = `repo:${f.repo}`
        const match: ClaimMatch = Option.isSome(f.ref)
          ? { issuer: githubIssuer, subject: `${base}:ref:${escape(f.ref.value)}` }
          : Option.isSome(f.environment)
          ? { issuer: githubIssuer, subject: `${base}:environment:${escape(f.environment.value)}` }
          : { issuer: githubIssuer, subjectPattern: `${base.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:.+` }
        return withAudience(match, f.audience)
      })
  },
  gitlab: {
    flags: {
      project: Options.text("gitlab-project").pipe(Options.withDescription("the project, GROUP/PROJECT")),
      ref: Options.text("gitlab-ref").pipe(Options.withDescription("a branch or tag name"), Options.optional),
      refType: Options.choice("gitlab-ref-type", ["branch", "tag"]).pipe(Options.withDefault("branch" as const)),
      gitlabIssuer: Options.text("gitlab-issuer").pipe(
        Options.withDefault("https://gitlab.com"),
        Options.withDescription("the GitLab instance")
      ),
      audience
    },
    description: "a GitLab CI/CD job of a project (on a branch or tag, else any of its jobs)",
    example: "arbor iam identities create gitlab builder --parent acme --gitlab-project acme/app --gitlab-ref main",
    build: (
      f: {
        project: string
        ref: Option.Option<string>
        refType: "branch" | "tag"
        gitlabIssuer: string
        audience: Option.Option<string>
      }
    ) =>
      Effect.gen(function*() {
        if (!/^[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)+$/.test(f.project)) {
          return yield* new UsageError({ message: `--gitlab-project ${f.project} is not GROUP/PROJECT` })
        }
        const base = `project_path:${f.project}`
        const match: ClaimMatch = Option.isSome(f.ref)
          ? { issuer: f.gitlabIssuer, subject: `${base}:ref_type:${f.refType}:ref:${f.ref.value}` }
          : { issuer: f.gitlabIssuer, subjectPattern: `${base.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:.+` }
        return withAudience(match, f.audience)
      })
  },
  kubernetes: {
    flags: {
      k8sIssuer: Options.text("k8s-issuer").pipe(Options.withDescription("the cluster's service-account issuer URL")),
      serviceAccount: Options.text("k8s-service-account").pipe(Options.withDescription("NAMESPACE:NAME")),
      audience
    },
    description: "a Kubernetes service account",
    example:
      "arbor iam identities create kubernetes agent --parent acme --k8s-issuer https://oidc.example.com --k8s-service-account tools:agent",
    build: (f: { k8sIssuer: string; serviceAccount: string; audience: Option.Option<string> }) =>
      Effect.gen(function*() {
        if (!/^[a-z0-9-]+:[a-z0-9.-]+$/.test(f.serviceAccount)) {
          return yield* new UsageError({ message: `--k8s-service-account ${f.serviceAccount} is not NAMESPACE:NAME` })
        }
        return withAudience({ issuer: f.k8sIssuer, subject: `system:serviceaccount:${f.serviceAccount}` }, f.audience)
      })
  },
  generic: {
    flags: {
      identityIssuer: Options.text("identity-issuer").pipe(Options.withDescription("the token issuer's URL")),
      subject: Options.text("subject").pipe(Options.withDescription("the token's exact subject")),
      audience
    },
    description: "any OIDC token issuer, by issuer and exact subject",
    example:
      "arbor iam identities create generic ci --parent acme --identity-issuer https://issuer.example.com --subject ci",
    build: (f: { identityIssuer: string; subject: string; audience: Option.Option<string> }) =>
      Effect.succeed(withAudience({ issuer: f.identityIssuer, subject: f.subject }, f.audience))
  }
} as const

const createIdentity = <K extends keyof typeof kinds>(kind: K) => {
  const spec = kinds[kind]
  return Command.make(
    kind,
    { ...common, output, parent, description, name: nameArg("identity"), ...spec.flags },
    (flags) =>
      Effect.gen(function*() {
        const claimMatch = yield* (spec.build as (f: typeof flags) => Effect.Effect<ClaimMatch, UsageError>)(flags)
        const client = yield* connect(flags)
        const created = yield* client.identities.create({
          path: { uid: yield* resolveGroup(client, flags.parent) },
          payload: {
            name: flags.name,
            ...given("description", flags.description),
            claimMatch
          }
        })
        yield* printRows([created], identityShape, flags.output)
      })
  ).pipe(Command.withDescription(`An identity for ${spec.description}. Example: ${spec.example}`))
}

const metadataShape: Output.Shape<IdentityMetadata> = {
  json: Wire.IdentityMetadata,
  columns: [
    { heading: "NAME", value: (m) => m.name },
    { heading: "COMPANY", value: (m) => m.company },
    { heading: "JOB TITLE", value: (m) => m.jobTitle },
    { heading: "PRODUCT", value: (m) => m.product },
    { heading: "UPDATES", value: (m) => (m.updatesOptIn ? "yes" : "no") },
    { heading: "UID", value: (m) => m.uid, wide: true }
  ]
}

/** `--kind` of `list`, as the protos' `RelationshipType`. */
const relationshipTypes = {
  "claim-match": "RELATIONSHIP_TYPE_CLAIM_MATCH",
  static: "RELATIONSHIP_TYPE_STATIC"
} as const

const identityResource = Resource.make({
  query: Resources.identities.query,
  shape: identityShape,
  list: (client, urlParams) => client.identities.list({ urlParams }),
  items: (page) => page.identities,
  order: "name",
  placed: (i) => Uid.parentOrNull(i.uid),
  get: (client, uid) => client.identities.get({ path: { uid } }),
  delete: (client, uid) => client.identities.delete({ path: { uid } }),
  ref: {
    name: "identity",
    description: "the identity: its uid, or its group's path and its name (acme/platform/deployer)",
    resolve: resolveIdentity
  }
})

/** `arbor iam identities`. */
export const identities = Command.make("identities").pipe(
  Command.withDescription("Identities: what workloads and people are, assumed through their tokens' claims."),
  Help.withSubcommands([
    Resource.list(identityResource, "List identities. Example: arbor iam identities list --parent acme --kind static", {
      flags: {
        relationship_type: Options.choice("kind", ["claim-match", "static"]).pipe(
          Options.withDescription(
            "only identities assumed through claims (claim-match) or holding static keys (static)"
          ),
          Options.optional,
          Options.map((kind) => Option.getOrUndefined(Option.map(kind, (k) => relationshipTypes[k])))
        )
      }
    }),
    Command.make("create").pipe(
      Command.withDescription("Create an identity that a workload's tokens assume."),
      Help.withSubcommands([
        createIdentity("github"),
        createIdentity("gitlab"),
        createIdentity("kubernetes"),
        createIdentity("generic")
      ])
    ),
    Resource.describe(identityResource, "Show one identity. Example: arbor iam identities describe acme/ci"),
    Command.make(
      "update",
      {
        ...common,
        output,
        identity: Args.text({ name: "identity" }).pipe(
          Args.withDescription("the identity: its uid, or its group's path and its name (acme/platform/deployer)")
        ),
        name: Options.text("name").pipe(Options.withDescription("its new name"), Options.optional),
        description: description.pipe(Options.withDescription("its new description"))
      },
      (flags) =>
        Effect.gen(function*() {
          const payload = {
            ...given("name", flags.name),
            ...given("description", flags.description)
          }
          if (Object.keys(payload).length === 0) {
            return yield* new UsageError({ message: "give --name or --description" })
          }
          const client = yield* connect(flags)
          const uid = yield* resolveIdentity(client, flags.identity)
          const updated = yield* client.identities.update({ path: { uid }, urlParams: {}, payload })
          yield* printRows([updated], identityShape, flags.output)
        })
    ).pipe(
      Command.withDescription(
        "Rename an identity or change its description (your own, as a person). Example: arbor iam identities update acme/ci --name deployer"
      )
    ),
    Command.make(
      "update-metadata",
      {
        ...common,
        output,
        company: Options.text("company").pipe(Options.withDescription("your company"), Options.optional),
        jobTitle: Options.text("job-title").pipe(Options.withDescription("your job title"), Options.optional),
        product: Options.text("product").pipe(
          Options.withDescription("the product you are interested in"),
          Options.optional
        ),
        updatesOptIn: Options.choice("updates", ["yes", "no"]).pipe(
          Options.withDescription("whether you want to receive updates"),
          Options.optional
        )
      },
      (flags) =>
        Effect.gen(function*() {
          const identityMetadata = {
            ...given("company", flags.company),
            ...given("jobTitle", flags.jobTitle),
            ...given("product", flags.product),
            ...given("updatesOptIn", Option.map(flags.updatesOptIn, (answer) => answer === "yes"))
          }
          const changed = Object.keys(identityMetadata)
          if (changed.length === 0) {
            return yield* new UsageError({ message: "give --company, --job-title, --product or --updates" })
          }
          const client = yield* connect(flags)
          // The mask names the fields given, so that `--updates no` and an empty `--company ""` clear them.
          const updated = yield* client.ownMetadata.update({
            payload: { identityMetadata, updateMask: changed.join(",") }
          })
          yield* printRows([updated], metadataShape, flags.output)
        })
    ).pipe(
      Command.withDescription(
        "Set your own identity's metadata (company, job title, product, updates). Example: arbor iam identities update-metadata --company Acme --updates yes"
      )
    ),
    Resource.remove(
      identityResource,
      "Delete an identity and its role bindings. Example: arbor iam identities delete acme/ci"
    ),
    Command.make(
      "lookup",
      {
        ...common,
        signInIssuer: Args.text({ name: "issuer" }).pipe(
          Args.withDescription("the OpenID issuer the person signs in with")
        ),
        subject: Args.text({ name: "subject" }).pipe(Args.withDescription("their subject at that issuer"))
      },
      (flags) =>
        Effect.gen(function*() {
          const client = yield* connect(flags)
          const found = yield* client.identityLookup.lookup({
            urlParams: { issuer: flags.signInIssuer, subject: flags.subject }
          })
          yield* print(found.uid)
        })
    ).pipe(
      Command.withDescription(
        "A person's identity uid, before or after their first sign-in. Example: arbor iam identities lookup https://accounts.google.com 1234"
      )
    )
  ])
)
