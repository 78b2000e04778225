/* global process, Buffer */
/**
 * Runs `arbor`'s bundle with V8's cache of its compiled code, which a call would otherwise spend about a third of its
 * CPU making again (parsing 3 MB and compiling what runs). Node 20 keeps such a cache only for a script, not an ES
 * module: so the bundle is CommonJS, run as Node runs a CommonJS module.
 *
 * The cache is named by the hash of the bundle's bytes and Node's version (V8 itself checks only a source's length),
 * and holds what the calls that wrote it compiled: it is written again when a call ends that runs a command none of
 * them ran (its first words: `arbor iam folders list`), up to `commandsCached` commands, so that it soon holds what a
 * person's usual calls need. A cache V8 refuses is written again; one that cannot be written is done without.
 */
import { createHash } from "node:crypto"
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { constants, Script } from "node:vm"

/** The most commands whose first call writes the cache again: past them, a new command only compiles its own code. */
export const commandsCached = 24

/** What the bundle is run inside, as Node wraps a CommonJS module (its `#!` line, not JavaScript there, left out). */
const wrapper = ["(function (exports, require, module, __filename, __dirname) { ", "\n})"]

/** `path`'s bytes, or undefined when it cannot be read. */
const readOrUndefined = (path) => {
  try {
    return readFileSync(path)
  } catch {
    return undefined
  }
}

/** Runs the CommonJS bundle `file` as the main program with `args`, its compiled code cached in `cacheDirectory`. */
export const runBundle = (file, cacheDirectory, args = process.argv.slice(2)) => {
  const bytes = readFileSync(file)
  const key = createHash("sha256").update(`${process.version} ${process.arch} ${wrapper[0]}`).update(bytes).digest(
    "hex"
  )
    .slice(0, 32)
  const cacheFile = join(cacheDirectory, `${key}.v8cache`)
  const commandsFile = join(cacheDirectory, `${key}.commands`)
  const cachedData = readOrUndefined(cacheFile)
  const source = wrapper[0] + bytes.toString("utf8").replace(/^#!.*/, "") + wrapper[1]
  const script = new Script(source, {
    filename: file,
    importModuleDynamically: constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
    ...(cachedData ? { cachedData } : {})
  })
  const accepted = cachedData !== undefined && script.cachedDataRejected !== true
  const covered = accepted ? String(readOrUndefined(commandsFile) ?? "").split("\n").filter((c) => c !== "") : []
  const command = ["arbor", ...args.filter((arg) => !arg.startsWith("-")).slice(0, 3)].join(" ")
  if (!accepted || (!covered.includes(command) && covered.length < commandsCached)) {
    process.once(
      "exit",
      () => writeCache(script, { cacheDirectory, cacheFile, commandsFile, key }, [...covered, command])
    )
  }
  const module = { exports: {}, filename: file, id: ".", loaded: false }
  script.runInThisContext()(module.exports, createRequire(file), module, file, dirname(file))
}

/**
 * Writes the cache of what `script` compiled so far and the commands it now covers, each whole (renamed into place),
 * and removes the caches of other bundles beside them.
 */
const writeCache = (script, { cacheDirectory, cacheFile, commandsFile, key }, commands) => {
  try {
    mkdirSync(cacheDirectory, { recursive: true, mode: 0o700 })
    const writeWhole = (path, contents) => {
      const temporary = `${path}.${process.pid}.tmp`
      writeFileSync(temporary, contents)
      renameSync(temporary, path)
    }
    writeWhole(cacheFile, Buffer.from(script.createCachedData()))
    writeWhole(commandsFile, commands.join("\n"))
    for (const other of readdirSync(cacheDirectory)) {
      if (!other.startsWith(key)) rmSync(join(cacheDirectory, other), { force: true })
    }
  } catch {
    // A cache that cannot be written (a read-only home, a full disk) only costs the next call its compiling.
  }
}
