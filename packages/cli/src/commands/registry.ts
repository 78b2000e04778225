/** `arbor images` and `arbor advisories`: the registry's repos (and their READMEs) and tags, and vulnerability advisories. */
import { Wire } from "@arbor/api"
import * as Resources from "@arbor/api/Resources"
import type { Advisory } from "@arbor/core/Advisory"
import type { Repo } from "@arbor/core/Repo"
import type { Tag } from "@arbor/core/Tag"
import { Args, Command, Options } from "@effect/cli"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { readFileSync } from "node:fs"
import { CommandFailed } from "../Failure.js"
import * as Help from "../Help.js"
import type * as Output from "../Output.js"
import * as Resource from "./iam/resource.js"
import { common, connect, output, printOne, time } from "./shared.js"

const repoShape: Output.Shape<Repo> = {
  json: Wire.Repo.v2,
  columns: [
    { heading: "NAME", value: (r) => r.name },
    { heading: "UID", value: (r) => r.uid },
    { heading: "TIER", value: (r) => r.catalogTier },
    { heading: "ACTIVE TAGS", value: (r) => r.activeTags.join(" "), wide: true }
  ]
}

const tagShape: Output.Shape<Tag> = {
  json: Wire.Tag.v2,
  columns: [
    { heading: "NAME", value: (t) => t.name },
    { heading: "DIGEST", value: (t) => t.digest },
    { heading: "UPDATED", value: (t) => time(t.updateTime) },
    { heading: "UID", value: (t) => t.uid, wide: true },
    { heading: "DEPRECATED", value: (t) => String(t.deprecated), wide: true }
  ]
}

const advisoryShape: Output.Shape<Advisory> = {
  json: Wire.Advisory.v2,
  columns: [
    { heading: "ID", value: (a) => a.advisoryId },
    { heading: "PACKAGE", value: (a) => a.packageName },
    { heading: "STATUS", value: (a) => a.latestEventType },
    { heading: "ALIASES", value: (a) => a.aliases.join(" ") },
    { heading: "UID", value: (a) => a.uid, wide: true }
  ]
}

const repoUid = Args.text({ name: "uid" }).pipe(Args.withDescription("the repo's uid"))

/** `arbor images`. */
export const images = Command.make("images").pipe(
  Command.withDescription("The registry's images: repos and their tags."),
  Help.withSubcommands([
    Command.make("repos").pipe(
      Command.withDescription("Repos."),
      Help.withSubcommands([
        Resource.list(
          {
            shape: repoShape,
            query: Resources.repos.query,
            list: (client, urlParams) => client.repos.list({ urlParams }),
            items: (page) => page.repos,
            order: "name"
          },
          "List repos. Example: arbor images repos list --parent acme"
        ),
        Command.make("readme", { ...common, uid: repoUid }, (flags) =>
          Effect.gen(function*() {
            const client = yield* connect(flags)
            const readme = yield* client.repoReadmes.get({ path: { uid: flags.uid } })
            yield* Effect.sync(() => process.stdout.write(readme.content))
          })).pipe(
            Command.withDescription("Print a repo's README (Markdown). Example: arbor images repos readme <uid>")
          ),
        Command.make(
          "set-readme",
          {
            ...common,
            uid: repoUid,
            file: Options.file("file", { exists: "yes" }).pipe(
              Options.withDescription("the Markdown file to make the README (an empty file removes it)")
            )
          },
          (flags) =>
            Effect.gen(function*() {
              const content = yield* Effect.try({
                try: () => readFileSync(flags.file, "utf8"),
                catch: (e) => new CommandFailed({ message: `cannot read ${flags.file}: ${e}` })
              })
              const client = yield* connect(flags)
              yield* client.repoReadmes.update({
                path: { uid: flags.uid },
                urlParams: { updateMask: "content" },
                payload: { content }
              })
              yield* Effect.sync(() => process.stderr.write(`Updated the README of ${flags.uid}\n`))
            })
        ).pipe(Command.withDescription(
          "Replace a repo's README with a Markdown file. Example: arbor images repos set-readme <uid> --file README.md"
        ))
      ])
    ),
    Command.make("tags").pipe(
      Command.withDescription("Tags."),
      Help.withSubcommands([
        Resource.list(
          {
            shape: tagShape,
            query: Resources.tags.query,
            list: (client, urlParams) => client.tags.list({ urlParams }),
            items: (page) => page.tags,
            order: "name"
          },
          "List a repo's tags. Example: arbor images tags list --repo <uid>",
          { flags: { "uidp.children_of": Options.text("repo").pipe(Options.withDescription("the repo's uid")) } }
        )
      ])
    )
  ])
)

/** `arbor advisories`. */
export const advisories = Command.make("advisories").pipe(
  Command.withDescription("Vulnerability advisories."),
  Help.withSubcommands([
    Resource.list(
      {
        shape: advisoryShape,
        query: Resources.advisories.query,
        list: (client, urlParams) => client.advisories.list({ urlParams }),
        items: (page) => page.advisories
      },
      "List advisories. Example: arbor advisories list --query openssl",
      {
        flags: {
          query: Options.text("query").pipe(
            Options.withDescription("a part of the package name, id or an alias"),
            Options.optional,
            Options.map(Option.getOrUndefined)
          ),
          package_names: Options.text("package").pipe(
            Options.withDescription("a package name (repeatable)"),
            Options.repeated,
            Options.map((names) => (names.length === 0 ? undefined : names))
          )
        }
      }
    ),
    Command.make("describe", {
      ...common,
      output,
      uid: Args.text({ name: "uid" }).pipe(Args.withDescription("the advisory's uid"))
    }, (flags) =>
      Effect.gen(function*() {
        const client = yield* connect(flags)
        yield* printOne(yield* client.advisories.get({ path: { uid: flags.uid } }), advisoryShape, flags.output)
      })).pipe(Command.withDescription("Show one advisory. Example: arbor advisories describe <uid> -o json"))
  ])
)
