/**
 * The project's protos: the generated TypeScript is what `buf generate` makes of them now, and every service,
 * method, message, field and enum value they declare is the reference protos' (same fully qualified names, numbers,
 * types and labels), so that clients generated from either speak to the other.
 */
import { assert, describe, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, relative } from "node:path"
import protobuf from "protobufjs"

const root = join(import.meta.dirname, "..")
const bin = join(root, "node_modules", ".bin")

const filesUnder = (dir: string): Array<string> =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)))
    .sort()

describe("the project's protos", () => {
  it("generate exactly the checked-in TypeScript", () => {
    const out = mkdtempSync(join(tmpdir(), "arbor-proto-"))
    try {
      execFileSync(join(bin, "buf"), ["generate", "--output", out], {
        cwd: root,
        env: { ...process.env, PATH: `${bin}:${process.env.PATH}` }
      })
      const generated = join(out, "src", "proto")
      const checkedIn = join(root, "src", "proto")
      assert.deepStrictEqual(filesUnder(generated), filesUnder(checkedIn))
      for (const file of filesUnder(checkedIn)) {
        assert.strictEqual(
          readFileSync(join(generated, file), "utf8"),
          readFileSync(join(checkedIn, file), "utf8"),
          `${file} is stale: run pnpm --filter @arbor/api generate`
        )
      }
    } finally {
      rmSync(out, { recursive: true, force: true })
    }
  }, 60_000)

  const reference = process.env.ARBOR_TEST_PROTOS
  it.runIf(reference !== undefined)(
    "declare what the reference protos declare, numbered alike, and Arbor's own fields from 1000",
    () => {
      // Well-known types come with protobufjs (descriptor.proto, for the reference's options, from its folder).
      const resolver = (dir: string) => (_: string, target: string) =>
        target === "google/protobuf/descriptor.proto"
          ? join(root, "node_modules", "protobufjs", target)
          : target.startsWith("google/protobuf/")
          ? target
          : join(dir, target)
      const ours = new protobuf.Root()
      ours.resolvePath = resolver(join(root, "proto"))
      const theirs = new protobuf.Root()
      theirs.resolvePath = resolver(reference!)
      // Server reflection is gRPC's own service, not the reference's.
      const protos = filesUnder(join(root, "proto")).filter((f) => f.endsWith(".proto") && !f.startsWith("grpc/"))
      ours.loadSync(protos, { keepCase: true }).resolveAll()
      theirs.loadSync(protos, { keepCase: true }).resolveAll()

      // Arbor's own messages: those only its own fields (from 1000) carry, which a reference client never reads.
      const own = new Set<string>()
      const collect = (namespace: protobuf.NamespaceBase) => {
        for (const nested of namespace.nestedArray) {
          if (nested instanceof protobuf.Type) {
            for (const field of nested.fieldsArray) {
              if (field.id >= 1000 && field.resolvedType instanceof protobuf.Type) {
                own.add(field.resolvedType.fullName.slice(1))
              }
            }
          }
          if (nested instanceof protobuf.Namespace || nested instanceof protobuf.Type) collect(nested)
        }
      }
      collect(ours)

      let compared = 0
      const visit = (namespace: protobuf.NamespaceBase) => {
        for (const nested of namespace.nestedArray) {
          const name = nested.fullName.slice(1)
          if (name.startsWith("google.protobuf")) continue
          const twin = theirs.lookup(name)
          if (twin === null && own.has(name)) continue
          assert.isNotNull(twin, `${name} is not in the reference protos, nor carried only by Arbor's own fields`)
          if (nested instanceof protobuf.Type) {
            const type = twin as protobuf.Type
            for (const field of nested.fieldsArray) {
              // Arbor's own fields, numbered from 1000 (DECISIONS §12): a reference client skips them.
              if (field.id >= 1000) {
                assert.isUndefined(type.fields[field.name], `${name}.${field.name} is the reference's own`)
                assert.isUndefined(type.fieldsById[field.id], `${name}: ${field.id} is the reference's own`)
                continue
              }
              const other = type.fields[field.name]
              assert.isDefined(other, `${name}.${field.name}`)
              assert.deepStrictEqual(
                [field.id, field.resolvedType?.fullName ?? field.type, field.repeated, field.map, field.partOf?.name],
                [
                  other!.id,
                  other!.resolvedType?.fullName ?? other!.type,
                  other!.repeated,
                  other!.map,
                  other!.partOf?.name
                ],
                `${name}.${field.name}`
              )
              compared++
            }
          } else if (nested instanceof protobuf.Enum) {
            assert.deepStrictEqual(nested.values, (twin as protobuf.Enum).values, name)
            compared++
          } else if (nested instanceof protobuf.Service) {
            const service = twin as protobuf.Service
            for (const method of nested.methodsArray) {
              const other = service.methods[method.name]
              assert.isDefined(other, `${name}/${method.name}`)
              assert.deepStrictEqual(
                [method.resolvedRequestType?.fullName, method.resolvedResponseType?.fullName],
                [other!.resolvedRequestType?.fullName, other!.resolvedResponseType?.fullName],
                `${name}/${method.name}`
              )
              compared++
            }
          }
          if (nested instanceof protobuf.Namespace || nested instanceof protobuf.Type) visit(nested)
        }
      }
      visit(ours)
      assert.isAbove(compared, 500)
    }
  )
})
