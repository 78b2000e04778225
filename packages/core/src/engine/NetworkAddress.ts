/**
 * IP addresses by where they lead: the public internet, or somewhere an outbound request on behalf of a caller must
 * never go (the machine itself, its private networks, link-local metadata services, multicast, unspecified and
 * reserved ranges). IPv6 forms that carry an IPv4 address (mapped, translated, compatible, NAT64, 6to4) are judged
 * by the IPv4 address they carry.
 */
import { isIPv4, isIPv6 } from "node:net"

/** Where an address leads. */
export type Kind =
  | "public"
  | "loopback"
  | "private"
  | "link-local"
  | "shared"
  | "multicast"
  | "unspecified"
  | "reserved"

/** IPv4 ranges other than public, as [first address, prefix length, kind]. */
const v4Ranges: ReadonlyArray<readonly [string, number, Kind]> = [
  ["0.0.0.0", 8, "unspecified"],
  ["10.0.0.0", 8, "private"],
  ["100.64.0.0", 10, "shared"],
  ["127.0.0.0", 8, "loopback"],
  ["169.254.0.0", 16, "link-local"],
  ["172.16.0.0", 12, "private"],
  ["192.0.0.0", 24, "reserved"],
  ["192.0.2.0", 24, "reserved"],
  ["192.88.99.0", 24, "reserved"],
  ["192.168.0.0", 16, "private"],
  ["198.18.0.0", 15, "reserved"],
  ["198.51.100.0", 24, "reserved"],
  ["203.0.113.0", 24, "reserved"],
  ["224.0.0.0", 4, "multicast"],
  ["240.0.0.0", 4, "reserved"]
]

const v4Value = (address: string): number => address.split(".").reduce((n, part) => n * 256 + Number(part), 0)

const v4Compiled = v4Ranges.map(([first, bits, kind]) => {
  const size = 2 ** (32 - bits)
  return { first: v4Value(first), size, kind }
})

const kindOfV4 = (value: number): Kind => {
  for (const r of v4Compiled) if (value >= r.first && value < r.first + r.size) return r.kind
  return "public"
}

/** The eight 16-bit groups of an IPv6 address (already known to be valid), zone index dropped. */
const v6Groups = (address: string): ReadonlyArray<number> => {
  let text = address.replace(/%.*$/, "")
  const last = text.lastIndexOf(":")
  if (text.includes(".", last)) {
    const v4 = v4Value(text.slice(last + 1))
    text = `${text.slice(0, last + 1)}${Math.floor(v4 / 65536).toString(16)}:${(v4 % 65536).toString(16)}`
  }
  const parse = (s: string) => s === "" ? [] : s.split(":").map((h) => parseInt(h, 16))
  const [head, rest] = text.split("::") as [string, string | undefined]
  if (rest === undefined) return parse(head)
  const before = parse(head)
  const after = parse(rest)
  return [...before, ...Array<number>(8 - before.length - after.length).fill(0), ...after]
}

const kindOfV6 = (g: ReadonlyArray<number>): Kind => {
  const embedded = (hi: number, lo: number) => kindOfV4(hi * 65536 + lo)
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0)
  if (zeros(0, 8)) return "unspecified"
  if (zeros(0, 7) && g[7] === 1) return "loopback"
  if (zeros(0, 5) && g[5] === 0xffff) return embedded(g[6]!, g[7]!) // IPv4-mapped
  if (zeros(0, 4) && g[4] === 0xffff && g[5] === 0) return embedded(g[6]!, g[7]!) // IPv4-translated (RFC 2765)
  if (zeros(0, 6)) return embedded(g[6]!, g[7]!) // IPv4-compatible (deprecated)
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return embedded(g[6]!, g[7]!) // NAT64
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1) return "private" // local-use NAT64
  if (g[0] === 0x2002) return embedded(g[1]!, g[2]!) // 6to4
  if (g[0] === 0x2001 && g[1]! < 0x200) return "reserved" // Teredo, benchmarking, ORCHID
  if (g[0] === 0x2001 && g[1] === 0xdb8) return "reserved" // documentation
  if (g[0] === 0x100 && zeros(1, 4)) return "reserved" // discard
  if ((g[0]! & 0xfe00) === 0xfc00) return "private" // unique local
  if ((g[0]! & 0xffc0) === 0xfe80) return "link-local"
  if ((g[0]! & 0xffc0) === 0xfec0) return "private" // site-local (deprecated)
  if ((g[0]! & 0xff00) === 0xff00) return "multicast"
  return "public"
}

/** Where `address` (an IPv4 or IPv6 literal, IPv6 with or without brackets) leads; undefined when it is not one. */
export const kind = (address: string): Kind | undefined => {
  const bare = address.startsWith("[") && address.endsWith("]") ? address.slice(1, -1) : address
  if (isIPv4(bare)) return kindOfV4(v4Value(bare))
  if (isIPv6(bare)) return kindOfV6(v6Groups(bare))
  return undefined
}

/** True for an IP literal (IPv6 with or without brackets). */
export const isLiteral = (host: string): boolean => kind(host) !== undefined

/** True for the host names that loopback issuers may use in development: `localhost` and loopback literals. */
export const isLoopbackHost = (host: string): boolean => host === "localhost" || kind(host) === "loopback"
