/**
 * A document of IAM as code as `Declarative` reads it: decoded, with each refusal naming its place in the document
 * (a secret written inline, one shared by two providers, a folder misnamed), and its folders by path.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { InvalidArgument } from "../../engine/Errors.js"
import * as Validation from "../../engine/Validation.js"
import * as OrganizationDocument from "../OrganizationDocument.js"
import { Document, type FolderType, type Organization, type RoleSpec } from "../OrganizationDocument.js"
import { byKey, joined } from "./model.js"

/** The path of a client secret written in the document itself, which is refused: it would live in a repository. */
export const inlineSecret = (input: unknown): string | undefined => {
  const entries = (value: unknown): Array<[string, unknown]> =>
    typeof value === "object" && value !== null && !Array.isArray(value) ? Object.entries(value) : []
  const organizations = entries(input).find(([key]) => key === "organizations")?.[1]
  for (const [name, organization] of entries(organizations)) {
    const providers = entries(organization).find(([key]) => key === "identityProviders")?.[1]
    for (const [key, provider] of entries(providers)) {
      if (entries(provider).some(([field]) => field === "clientSecret")) {
        return `organizations.${name}.identityProviders.${key}.clientSecret`
      }
    }
  }
  return undefined
}

/**
 * Refuses a document in which two identity providers read one secret (one variable, one file): applied, the one
 * provider's secret would be sent to the other's issuer (DECISIONS §20).
 */
export const oneSecretEach = (document: Document): Effect.Effect<Document, InvalidArgument> => {
  const readers = new Map<string, string>()
  for (const [name, organization] of byKey(document.organizations)) {
    for (const [key, provider] of byKey(organization.identityProviders)) {
      if (provider.secretFrom === undefined) continue
      const source = OrganizationDocument.sourceOf(provider.secretFrom)
      const field = `organizations.${name}.identityProviders.${key}.secretFrom`
      const first = readers.get(source)
      if (first !== undefined) {
        return InvalidArgument.field(
          field,
          `reads the secret that ${first} reads (${source}): each identity provider's secret is its own`
        )
      }
      readers.set(source, field)
    }
  }
  return Effect.succeed(document)
}

/**
 * A document as a caller gives it: YAML parsed or JSON, unknown keys refused by their path, no secret inline, no
 * secret read by two providers.
 */
export const decodeDocument = (input: unknown) => {
  const secret = inlineSecret(input)
  const resources = OrganizationDocument.resourcesOf(input)
  return resources > OrganizationDocument.maxResources
    ? InvalidArgument.field(
      "organizations",
      `declares ${resources} resources; a document declares at most ${OrganizationDocument.maxResources}: split it`
    )
    : secret !== undefined
    ? InvalidArgument.field(
      secret,
      "must not be written in the document: give secretFrom: {env: NAME} or {file: path}, read where it is applied"
    )
    : Schema.decodeUnknown(Document, { errors: "all", onExcessProperty: "error" })(input).pipe(
      Effect.mapError((error) => Validation.fromParseError(error)),
      Effect.flatMap(oneSecretEach)
    )
}

/** A role written as its capabilities alone. */
export const isList = (spec: typeof RoleSpec.Type): spec is ReadonlyArray<string> => Array.isArray(spec)

/** The document place of key `name` below `at`: `.prod`, or `["Bad Name"]` for a key that is not a plain word. */
export const placeOf = (at: string, name: string) =>
  /^[A-Za-z0-9_-]+$/.test(name) ? `${at}.${name}` : `${at}[${JSON.stringify(name)}]`

export const isName = Schema.is(Validation.Name)

/** The document place of the first folder among `folders` (at `at`) whose name is no name, if any. */
export const misnamedFolder = (
  folders: { readonly [name: string]: FolderType } | undefined,
  at: string
): string | undefined => {
  for (const [name, folder] of Object.entries(folders ?? {})) {
    const place = placeOf(`${at}.folders`, name)
    const below = isName(name) ? misnamedFolder(folder.folders, place) : place
    if (below !== undefined) return below
  }
  return undefined
}

/** The folders of a document's organization by path, parents first. */
export const foldersOf = (organization: Organization) => {
  const folders = new Map<string, FolderType>()
  const walk = (prefix: string, children: { readonly [name: string]: FolderType } | undefined) => {
    for (const [name, folder] of byKey(children)) {
      folders.set(joined(prefix, name), folder)
      walk(joined(prefix, name), folder.folders)
    }
  }
  walk("", organization.folders)
  return folders
}
