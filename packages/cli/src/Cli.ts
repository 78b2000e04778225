/**
 * The `arbor` command tree: `auth` to sign in and get tokens, `config` for the config file, `iam` for the hierarchy,
 * `images` and `advisories` to read the registry and vulnerabilities, `events` for the audit trail, `export`, `diff`
 * and `apply` for IAM as code. Results go to stdout, messages for the
 * person to stderr.
 */
import { Command } from "@effect/cli"
import { applyCommand, diffCommand, exportCommand, iacCommand } from "./commands/asCode.js"
import { auth } from "./commands/auth.js"
import { config } from "./commands/config.js"
import { events } from "./commands/events.js"
import { iam } from "./commands/iam.js"
import { advisories, images } from "./commands/registry.js"
import * as Help from "./Help.js"

/** The whole command line. */
export const arbor = Command.make("arbor").pipe(
  Command.withDescription("Arbor's command-line client: sign in, get tokens, manage the hierarchy."),
  Help.withSubcommands([
    auth,
    config,
    iam,
    images,
    advisories,
    events,
    exportCommand,
    diffCommand,
    applyCommand,
    iacCommand
  ])
)
