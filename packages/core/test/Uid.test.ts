import { assert, describe, it } from "@effect/vitest"
import * as Option from "effect/Option"
import { Uid } from "../src/index.js"

const org = "0123456789abcdef0123456789abcdef01234567"
const ab = `${org}/00000000000000b0`
const abc = `${org}/00000000000000b0c`

describe("Uid", () => {
  it("validates roots and children", () => {
    assert.isTrue(Uid.isUid(org))
    assert.isTrue(Uid.isUid(`${org}/0123456789abcdef/fedcba9876543210`))
    for (
      const bad of [
        "",
        org.slice(1),
        org.toUpperCase(),
        `${org}/`,
        `${org}/123`,
        `${org}//0123456789abcdef`,
        ` ${org}`,
        `${org}\n`
      ]
    ) {
      assert.isFalse(Uid.isUid(bad), JSON.stringify(bad))
    }
    const root = Uid.makeRoot()
    const child = Uid.makeChild(root)
    assert.isTrue(Uid.isUid(root) && Uid.isUid(child))
    assert.deepStrictEqual(Uid.parent(child), Option.some(root))
    assert.isTrue(Option.isNone(Uid.parent(root)))
    assert.strictEqual(Uid.depth(Uid.makeChild(child)), 2)
    assert.strictEqual(Uid.rootOf(Uid.makeChild(child)), root)
  })

  it("ancestry is by whole segments: a/b is never an ancestor of a/bc", () => {
    assert.isTrue(Uid.isAncestor(org, ab))
    assert.isTrue(Uid.isAncestor(ab, `${ab}/0000000000000001`))
    assert.isFalse(Uid.isAncestor(ab, abc))
    assert.isFalse(Uid.isAncestor(ab, ab))
    assert.isTrue(Uid.isAncestorOrSelf(ab, ab))
    assert.isFalse(Uid.inRange(Uid.descendants(ab), abc))
    assert.isFalse(Uid.inRange(Uid.descendants(ab), `${abc}/0000000000000001`))
    assert.isTrue(Uid.inRange(Uid.descendants(ab), `${ab}/0000000000000001`))
    assert.isFalse(Uid.inRange(Uid.descendants(ab), ab))
    assert.isTrue(Uid.inRange(Uid.subtree(ab), ab))
    assert.isTrue(Uid.inRange(Uid.only(ab), ab))
    assert.isFalse(Uid.inRange(Uid.only(ab), `${ab}/0000000000000001`))
    assert.deepStrictEqual(Uid.ancestors(`${ab}/0000000000000001` as Uid.Uid), [org, ab])
  })

  it("normalizes and intersects unions of ranges", () => {
    const a = Uid.subtree(org)
    const b = Uid.descendants(ab)
    assert.deepStrictEqual(Uid.normalizeRanges([b, a, a]), [a])
    assert.deepStrictEqual(Uid.intersectRanges([a], [b]), [b])
    assert.deepStrictEqual(Uid.intersectRanges([Uid.only(ab)], [b]), [])
  })
})
