/** `arbor iam identity-providers`: an organization's own OpenID provider for its people. */
import { Wire } from "@arbor/api"
import * as Resources from "@arbor/api/Resources"
import type { IdentityProvider } from "@arbor/core/IdentityProvider"
import * as Uid from "@arbor/core/Uid"
import { Command, Options } from "@effect/cli"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
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
  printRows,
  resolveGroup,
  resolveRole
} from "../shared.js"
import * as Resource from "./resource.js"
import { scim } from "./scim.js"

const providerShape: Output.Shape<IdentityProvider> = {
  json: Wire.IdentityProvider.v2,
  columns: [
    { heading: "NAME", value: (p) => p.name },
    { heading: "UID", value: (p) => p.uid },
    { heading: "ISSUER", value: (p) => p.oidc.issuer },
    { heading: "CLIENT ID", value: (p) => p.oidc.clientId, wide: true },
    { heading: "DEFAULT ROLE", value: (p) => p.defaultRole, wide: true }
  ]
}

const providerResource = Resource.make({
  query: Resources.identityProviders.query,
  shape: providerShape,
  list: (client, urlParams) => client.identityProviders.list({ urlParams }),
  items: (page) => page.identityProviders,
  order: "name",
  placed: (p) => Uid.parentOrNull(p.uid),
  get: (client, uid) => client.identityProviders.get({ path: { uid } }),
  delete: (client, uid) => client.identityProviders.delete({ path: { uid } }),
  ref: Resource.byUid("identity provider")
})

/** `arbor iam identity-providers`. */
export const identityProviders = Command.make("identity-providers").pipe(
  Command.withDescription("Identity providers: an organization's own OpenID provider for its people."),
  Help.withSubcommands([
    Resource.list(providerResource, "List identity providers. Example: arbor iam identity-providers list"),
    Command.make(
      "create",
      {
        ...common,
        output,
        parent,
        description,
        name: nameArg("identity provider"),
        oidcIssuer: Options.text("oidc-issuer").pipe(Options.withDescription("the provider's issuer URL (https)")),
        clientId: Options.text("client-id").pipe(Options.withDescription("Arbor's client id there")),
        clientSecret: Options.redacted("client-secret").pipe(
          Options.withDescription("its client secret (default: ARBOR_CLIENT_SECRET; none for a public client)"),
          Options.optional
        ),
        role: Options.text("default-role").pipe(
          Options.withDescription("the role its people get in the group (uid or name)")
        ),
        scopes: Options.text("scope").pipe(
          Options.repeated,
          Options.withDescription("a scope to ask for beside openid email profile (repeat)")
        ),
        groupsClaim: Options.text("groups-claim").pipe(
          Options.withDescription("the ID token claim listing a person's groups there, for group mappings"),
          Options.optional
        )
      },
      (flags) =>
        Effect.gen(function*() {
          const client = yield* connect(flags)
          const secret = Option.isSome(flags.clientSecret)
            ? Redacted.value(flags.clientSecret.value)
            : process.env.ARBOR_CLIENT_SECRET
          const created = yield* client.identityProviders.create({
            path: { uid: yield* resolveGroup(client, flags.parent) },
            payload: {
              name: flags.name,
              ...given("description", flags.description),
              defaultRole: yield* resolveRole(client, flags.role),
              oidc: {
                issuer: flags.oidcIssuer,
                clientId: flags.clientId,
                ...(secret === undefined ? {} : { clientSecret: secret }),
                additionalScopes: flags.scopes,
                ...given("groupsClaim", flags.groupsClaim)
              }
            }
          })
          yield* printRows([created], providerShape, flags.output)
        })
    ).pipe(Command.withDescription(
      "Add an organization's own OpenID provider; register {issuer}/oauth/callback there. " +
        "Example: arbor iam identity-providers create okta --parent acme --oidc-issuer https://acme.okta.com " +
        "--client-id arbor --default-role viewer"
    )),
    Resource.remove(
      providerResource,
      "Delete an identity provider. Example: arbor iam identity-providers delete <uid>"
    ),
    scim
  ])
)
