/**
 * What a person sees of the command line itself: `--help` on any command, typed before or after its words, rendered
 * here rather than by @effect/cli (whose renderer pushes descriptions to the right edge, repeats command prefixes,
 * colours pipes and describes every option as "A user-defined piece of text."); a word that names no command,
 * named at the level where it was typed; and flags that belong to every command (`--api`, `--issuer`) accepted
 * before the command's words. The content comes from the commands' own declarations: their descriptions and
 * their options' help, through @effect/cli's public help documents.
 */
import type { HelpDoc } from "@effect/cli"
import { CliConfig, Command } from "@effect/cli"
import type { Span } from "@effect/cli/HelpDoc/Span"
import * as HashSet from "effect/HashSet"

// Any command, whatever it needs and gives.
type AnyCommand = Command.Command<any, any, any, any>

/** The subcommands of each command that has some, recorded by `withSubcommands`. */
const children = new WeakMap<AnyCommand, ReadonlyArray<AnyCommand>>()

/** `Command.withSubcommands`, remembering the subcommands for help and for naming a mistyped word. */
export const withSubcommands = <const Subcommands extends readonly [AnyCommand, ...Array<AnyCommand>]>(
  subcommands: Subcommands
) =>
<Name extends string, R, E, A>(self: Command.Command<Name, R, E, A>) => {
  const command = Command.withSubcommands(subcommands)(self)
  children.set(command, subcommands)
  return command
}

const config = CliConfig.make({ showBuiltIns: false, showTypes: true })

const nameOf = (command: AnyCommand) => [...HashSet.values(Command.getNames(command))][0] ?? ""

const spanText = (span: Span): string => {
  switch (span._tag) {
    case "Text":
    case "URI":
      return span.value
    case "Sequence":
      return spanText(span.left) + spanText(span.right)
    case "Highlight":
    case "Strong":
    case "Weak":
      return spanText(span.value)
  }
}

/** A help document's top-level parts, in order. */
const parts = (doc: HelpDoc.HelpDoc): Array<HelpDoc.HelpDoc> =>
  doc._tag === "Sequence" ? [...parts(doc.left), ...parts(doc.right)] : doc._tag === "Empty" ? [] : [doc]

/** A help document's sections: each header's title and what follows it. */
const sections = (doc: HelpDoc.HelpDoc) => {
  const out = new Map<string, Array<HelpDoc.HelpDoc>>()
  let current: Array<HelpDoc.HelpDoc> | undefined
  for (const part of parts(doc)) {
    if (part._tag === "Header") out.set(spanText(part.value), current = [])
    else current?.push(part)
  }
  return out
}

/** The paragraphs of a document, as text. */
/** A help document's text, without styling. */
export const plain = (doc: HelpDoc.HelpDoc): string => paragraphs(doc).join(" ")

const paragraphs = (doc: HelpDoc.HelpDoc): Array<string> =>
  parts(doc).flatMap((part) => part._tag === "Paragraph" ? [spanText(part.value)] : [])

/** A command's own description (its first paragraph), split from the example it ends with. */
const describe = (command: AnyCommand) => {
  const text = (sections(Command.getHelp(command, config)).get("DESCRIPTION") ?? []).flatMap(paragraphs).join(" ")
  const at = text.indexOf(" Example: ")
  return at === -1
    ? { summary: text, example: undefined }
    : { summary: text.slice(0, at), example: text.slice(at + 10) }
}

/** The notes @effect/cli adds about a value (its type, whether it may be left out or repeated). */
const libraryNote =
  /^(A user-defined piece of text|A true or false value|An integer|A floating point number|A date|A file system path|One of the following:|This setting is optional|This option (may|must) be repeated)/

/** One option or argument: its label (`--parent <group>`), what it is for, and whether it may be left out. */
interface Entry {
  readonly label: string
  readonly description: string
  readonly optional: boolean
}

const entries = (docs: ReadonlyArray<HelpDoc.HelpDoc> | undefined): Array<Entry> =>
  (docs ?? []).flatMap((doc) =>
    doc._tag === "DescriptionList"
      ? doc.definitions.map(([span, help]): Entry => {
        const notes = paragraphs(help)
        const optional = notes.some((note) =>
          note.startsWith("This setting is optional.") || note.includes("may be repeated zero or more times")
        )
        // A repeatable option's span ends in `...` (or its counts): `-c, --capability <text>...`.
        const [, written, repeated] = /^(.*?)((?:\.\.\.| \d+\+| \d+ - \d+)?)$/.exec(spanText(span))!
        const bare = written!.replace(/^\((.*)\)$/, "$1")
        // `--parent text` → `--parent <text>`; `-o, --output a | b` → `-o, --output <a|b>`; `<name>` stays.
        const label = bare.replace(/^((?:-\w, )?--[\w-]+) (.+)$/, (_, flag: string, value: string) =>
          `${flag} <${value.replace(/ \| /g, "|")}>`) + (repeated === "" ? "" : "...")
        // A flag shared by several commands may be described again for one of them: the last description holds.
        const description = notes.filter((note) =>
          !libraryNote.test(note)
        ).at(-1) ?? ""
        return { label, description, optional }
      })
      : []
  )

/** How help is laid out: the terminal's width, and whether headings may be bold. */
interface Layout {
  readonly columns: number
  readonly color: boolean
}

/** The layout for standard output: its width on a terminal (80 otherwise); bold only on a terminal, not with NO_COLOR. */
const layoutOf = (stream: { readonly isTTY?: boolean; readonly columns?: number }): Layout => ({
  columns: Math.max(40, Math.min(stream.isTTY === true ? stream.columns ?? 80 : 80, 120)),
  color: stream.isTTY === true && (process.env.NO_COLOR ?? "") === "" && process.env.TERM !== "dumb"
})

/** `text` wrapped to `width`, its lines after the first indented by `indent`. */
const wrap = (text: string, width: number, indent: number): string => {
  const lines: Array<string> = []
  let line = ""
  for (const word of text.split(/\s+/).filter((w) => w !== "")) {
    if (line !== "" && line.length + 1 + word.length > width) {
      lines.push(line)
      line = word
    } else {
      line = line === "" ? word : `${line} ${word}`
    }
  }
  if (line !== "") lines.push(line)
  return lines.join(`\n${" ".repeat(indent)}`)
}

/**
 * A command line within `width`: broken between words, each line but the last ending with ` \` and the next
 * indented, so that it still runs as it is copied.
 */
const commandLine = (text: string, width: number): string => {
  const lines: Array<string> = []
  let line = ""
  for (const word of text.split(" ").filter((w) => w !== "")) {
    if (line !== "" && line.length + 1 + word.length + 2 > width) {
      lines.push(`${line} \\`)
      line = `    ${word}`
    } else {
      line = line === "" ? word : `${line} ${word}`
    }
  }
  if (line !== "") lines.push(line)
  return lines.join("\n  ")
}

/** Two columns: labels, and descriptions wrapped beside them (below a label too long for its column). */
const table = (rows: ReadonlyArray<readonly [string, string]>, layout: Layout): string => {
  const column = Math.min(Math.max(...rows.map(([label]) => label.length)) + 4, 32)
  const width = Math.max(layout.columns - column, 20)
  return rows.map(([label, description]) => {
    const text = wrap(description, width, column)
    return `  ${label}`.length + 2 <= column
      ? `${`  ${label}`.padEnd(column)}${text}`
      : `  ${label}\n${" ".repeat(column)}${text}`
  }).join("\n")
}

const heading = (title: string, layout: Layout) => layout.color ? `\u001b[1m${title}\u001b[0m` : title

/** The help of the command at `path` (the words from the program's name down to it). */
const render = (path: ReadonlyArray<string>, command: AnyCommand, layout: Layout): string => {
  const { example, summary } = describe(command)
  const subcommands = children.get(command)
  const blocks: Array<string> = []
  if (subcommands !== undefined) {
    blocks.push(`${heading("Usage:", layout)} ${path.join(" ")} <command> [options]`)
    blocks.push(wrap(summary, layout.columns, 0))
    blocks.push(
      `${heading("Commands:", layout)}\n${
        table(subcommands.map((child) => [nameOf(child), describe(child).summary]), layout)
      }`
    )
    blocks.push(`Run '${path.join(" ")} <command> --help' for a command's options.`)
    return `${blocks.join("\n\n")}\n`
  }
  const help = sections(Command.getHelp(command, config))
  const args = entries(help.get("ARGUMENTS"))
  const options = entries(help.get("OPTIONS"))
  const required = options.filter((option) => !option.optional).map((option) => option.label)
  const usage = [
    ...path,
    ...args.map((arg) => arg.label),
    ...required,
    ...(options.length > required.length ? ["[options]"] : [])
  ]
  blocks.push(`${heading("Usage:", layout)} ${wrap(usage.join(" "), layout.columns - 7, 7)}`)
  blocks.push(wrap(summary, layout.columns, 0))
  if (args.length > 0) {
    blocks.push(`${heading("Arguments:", layout)}\n${table(args.map((arg) => [arg.label, arg.description]), layout)}`)
  }
  const flags: Array<readonly [string, string]> = [
    ...options.map((option) => [option.label, option.description] as const),
    ["-h, --help", "show this help"]
  ]
  blocks.push(`${heading("Options:", layout)}\n${table(flags, layout)}`)
  if (example !== undefined) {
    blocks.push(`${heading("Example:", layout)}\n  ${commandLine(example, layout.columns - 2)}`)
  }
  return `${blocks.join("\n\n")}\n`
}

/** Where the words of a command line lead: the command they name, and the words left after it. */
interface Found {
  readonly path: ReadonlyArray<string>
  readonly command: AnyCommand
  readonly rest: ReadonlyArray<string>
}

/** Follows the leading words of `args` down from `root` (named `program`) as far as they name commands. */
const find = (program: string, root: AnyCommand, args: ReadonlyArray<string>): Found => {
  let command = root
  const path = [program]
  let at = 0
  for (; at < args.length; at++) {
    const next = children.get(command)?.find((child) => nameOf(child) === args[at])
    if (next === undefined) break
    command = next
    path.push(args[at]!)
  }
  return { path, command, rest: args.slice(at) }
}

/** The subcommand names of `command`, if it has any. */
const subcommandNames = (command: AnyCommand): ReadonlyArray<string> | undefined => children.get(command)?.map(nameOf)

/** The name among `names` closest to `word` (at most two edits away), if any. */
const closest = (word: string, names: ReadonlyArray<string>): string | undefined => {
  const distance = (a: string, b: string) => {
    const row = Array.from({ length: b.length + 1 }, (_, i) => i)
    for (let i = 1; i <= a.length; i++) {
      let diagonal = row[0]!
      row[0] = i
      for (let j = 1; j <= b.length; j++) {
        const above = row[j]!
        row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1))
        diagonal = above
      }
    }
    return row[b.length]!
  }
  const ranked = names.map((name) => [name, distance(word, name)] as const).sort((a, b) => a[1] - b[1])
  return ranked[0] !== undefined && ranked[0][1] <= 2 ? ranked[0][0] : undefined
}

/**
 * The flags of a command that runs (no subcommands), each with whether it takes a value and, for a choice, its
 * values: read from its help, so as @effect/cli parses them.
 */
const flagsOf = (command: AnyCommand) => {
  const flags = new Map<string, { readonly value: boolean; readonly choices: ReadonlyArray<string> | undefined }>()
  for (const { label } of entries(sections(Command.getHelp(command, config)).get("OPTIONS"))) {
    const [, names = "", value] = /^((?:-\w, )?--[\w-]+)(?: <(.+)>)?/.exec(label) ?? []
    const choices = value !== undefined && value.includes("|") ? value.split("|") : undefined
    for (const name of names.split(", ")) flags.set(name, { value: value !== undefined, choices })
  }
  return flags
}

/** What @effect/cli itself takes on every command, though it shows none of it. */
const builtIn: ReadonlySet<string> = new Set(["--help", "-h", "--version", "--wizard", "--completions", "--log-level"])

/**
 * The first flag among `rest` (what follows a command's words) that the command does not take, if any: a value of a
 * flag that takes one is skipped, and so is everything after `--`.
 */
const unknownFlag = (command: AnyCommand, rest: ReadonlyArray<string>, globalFlags: ReadonlySet<string>) => {
  const flags = flagsOf(command)
  for (let i = 0; i < rest.length; i++) {
    const token = rest[i]!
    if (token === "--") return undefined
    if (!token.startsWith("-") || token === "-" || /^-\d/.test(token)) continue
    const name = token.split("=")[0]!
    const known = flags.get(name)
    if (known !== undefined || globalFlags.has(name)) {
      if ((known === undefined || known.value) && !token.includes("=")) i++
      continue
    }
    if (!builtIn.has(name)) {
      return {
        name,
        suggestion: closest(name, [...flags.keys()].filter((f) => f.startsWith("--")))
      }
    }
  }
  return undefined
}

/**
 * The flag of the command `path` names whose choices are `choices` (as @effect/cli lists them when a value is not
 * one), so that a refusal can name it: `-o, --output`.
 */
export const choiceFlag = (
  root: AnyCommand,
  program: string,
  path: ReadonlyArray<string>,
  choices: ReadonlyArray<string>
) => {
  const { command } = find(program, root, path.slice(1))
  const names = [...flagsOf(command)].filter(([, flag]) => flag.choices?.join(",") === choices.join(",")).map(([n]) =>
    n
  )
  return names.length === 0 ? undefined : names.join(", ")
}

/** `args` with the flags in `globalFlags` (each with a value) given before the command's words moved after them. */
const hoist = (args: ReadonlyArray<string>, globalFlags: ReadonlySet<string>): Array<string> => {
  const hoisted: Array<string> = []
  const rest = [...args]
  while (rest.length > 0 && rest[0]!.startsWith("--") && globalFlags.has(rest[0]!.split("=")[0]!)) {
    hoisted.push(...rest.splice(0, rest[0]!.includes("=") ? 1 : 2))
  }
  return [...rest, ...hoisted]
}

/**
 * What a command line asks before any command runs: help (printed, exit 0), a group without its command (its help,
 * exit 0), or a word that names no command (said on stderr, exit 2); otherwise the arguments for @effect/cli to run,
 * with the global flags given before the command's words moved after them.
 */
export const prepare = (options: {
  readonly program: string
  readonly root: AnyCommand
  readonly args: ReadonlyArray<string>
  readonly globalFlags?: ReadonlySet<string>
}):
  | { readonly exitCode: number; readonly path?: ReadonlyArray<string> }
  | { readonly args: ReadonlyArray<string>; readonly path: ReadonlyArray<string> } =>
{
  const args = hoist(options.args, options.globalFlags ?? new Set())
  const { command, path, rest } = find(options.program, options.root, args)
  const names = subcommandNames(command)
  if (args.includes("--help") || args.includes("-h") || (names !== undefined && rest.length === 0)) {
    process.stdout.write(render(path, command, layoutOf(process.stdout)))
    return { exitCode: 0 }
  }
  const word = rest[0]
  if (names === undefined) {
    // A flag the command does not take is named as such, before @effect/cli would name another thing missing.
    const unknown = unknownFlag(command, rest, options.globalFlags ?? new Set())
    if (unknown === undefined) return { args, path }
    process.stderr.write(
      `${options.program}: '${unknown.name}' is not an option of '${path.join(" ")}'${
        unknown.suggestion === undefined ? "" : `; did you mean '${unknown.suggestion}'?`
      } (${path.join(" ")} --help)\n`
    )
    return { exitCode: 2, path }
  }
  if (word === undefined || word.startsWith("-")) return { args, path }
  const suggestion = closest(word, names)
  process.stderr.write(
    `${options.program}: '${word}' is not a command of '${path.join(" ")}'${
      suggestion === undefined ? "" : `; did you mean '${suggestion}'?`
    } (${path.join(" ")} --help lists them)\n`
  )
  return { exitCode: 2 }
}
