/**
 * The registry's custom method: a repo's README.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import * as Schema from "effect/Schema"
import { authenticated, UidPath, unchecked } from "../internal/declaration.js"
import * as Wire from "../Wire.js"

/** A repo's README (the protos' `RepoReadme`, a singleton sub-resource of the repo; docs/api.md §13). */
export const RepoReadmes = authenticated(
  HttpApiGroup.make("repoReadmes")
    .add(
      HttpApiEndpoint.get("get", "/repos/:uid/readme")
        .setPath(UidPath)
        .addSuccess(Wire.RepoReadme)
        .annotate(OpenApi.Summary, "Get a repo's README")
        .annotate(OpenApi.Description, "The repo's Markdown README (`repo.list`); empty content when it has none.")
    )
    .add(
      HttpApiEndpoint.patch("update", "/repos/:uid/readme")
        .setPath(UidPath)
        .setUrlParams(Schema.Struct({
          updateMask: Schema.optional(Schema.String).annotations({
            description: "`content` (or `*`); without it, the content present in the body"
          })
        }))
        .setPayload(unchecked<{ readonly content?: string }>("UpdateRepoReadme", {
          type: "object",
          properties: { content: { type: "string", description: "Markdown, at most 256 KiB" } }
        }))
        .addSuccess(Wire.RepoReadme)
        .annotate(OpenApi.Summary, "Replace a repo's README")
        .annotate(
          OpenApi.Description,
          "Replaces the README (`repo.update`). It must be Markdown whose HTML a sanitizer leaves as it is: no " +
            "scripts, styles, frames, event handlers or javascript: links (else INVALID_ARGUMENT naming content)."
        )
    ),
  "/registry/v2beta1",
  "READMEs: the Markdown that describes a repo."
)
