/**
 * The benchmark harness: every figure is an operation of ours beside its baseline (the floor: the same work done
 * by hand), timed in alternating rounds of the same run, so a noisy shared machine moves both together.
 */
import * as os from "node:os"

/** One measured comparison. */
export interface Comparison {
  readonly name: string
  /** Median milliseconds per operation. */
  readonly ours: number
  readonly baseline: number
  readonly baselineName: string
  /** A target on `ours / baseline`, when there is one. */
  readonly target?: number
}

/** A value that is measured rather than compared (memory, sizes). */
export interface Figure {
  readonly name: string
  readonly value: string
  readonly target?: string
  readonly met?: boolean
}

const median = (xs: ReadonlyArray<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]!
}

/**
 * Median time per call of `ours` and of `baseline`, over `rounds` alternating rounds of `perRound` calls each
 * (after one warm-up round of each).
 */
export const compare = async (
  name: string,
  options: {
    readonly ours: () => Promise<unknown> | unknown
    readonly baseline: () => unknown
    readonly baselineName: string
    readonly rounds?: number
    readonly perRound?: number
    readonly target?: number
    /** How many operations each call of `ours` and of `baseline` makes (a loop inside one call): 1 by default. */
    readonly perCall?: number
  }
): Promise<Comparison> => {
  const rounds = options.rounds ?? 7
  const perRound = options.perRound ?? 200
  const perCall = options.perCall ?? 1
  const time = async (f: () => Promise<unknown> | unknown) => {
    const start = performance.now()
    for (let i = 0; i < perRound; i++) await f()
    return (performance.now() - start) / perRound / perCall
  }
  await time(options.ours)
  await time(options.baseline)
  const ours: Array<number> = []
  const baseline: Array<number> = []
  for (let r = 0; r < rounds; r++) {
    ours.push(await time(options.ours))
    baseline.push(await time(options.baseline))
  }
  const result: Comparison = {
    name,
    ours: median(ours),
    baseline: median(baseline),
    baselineName: options.baselineName,
    ...(options.target === undefined ? {} : { target: options.target })
  }
  console.log(
    `${name}: ours ${result.ours.toFixed(3)} ms, ${options.baselineName} ${result.baseline.toFixed(3)} ms, ratio ${
      (result.ours / result.baseline).toFixed(2)
    }${options.target === undefined ? "" : ` (target ≤ ${options.target})`}`
  )
  return result
}

/** The machine, as the report describes it. */
export const machine = (extra: ReadonlyArray<string> = []): Array<string> => [
  `${os.cpus()[0]?.model ?? "unknown CPU"}, ${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB`,
  `Node ${process.version}, ${os.type()} ${os.release()}`,
  ...extra
]

const ms = (x: number) =>
  x < 0.001 ? `${(x * 1000).toFixed(3)} µs` : x < 0.1 ? `${(x * 1000).toFixed(1)} µs` : `${x.toFixed(2)} ms`

/** A markdown section for a suite. */
export const section = (
  title: string,
  description: ReadonlyArray<string>,
  comparisons: ReadonlyArray<Comparison>,
  figures: ReadonlyArray<Figure> = []
): string => {
  const rows = comparisons.map((c) => {
    const ratio = c.ours / c.baseline
    const verdict = c.target === undefined ? "" : ratio <= c.target ? `≤ ${c.target} met` : `≤ ${c.target} **missed**`
    return `| ${c.name} | ${ms(c.ours)} | ${ms(c.baseline)} (${c.baselineName}) | ${ratio.toFixed(2)} | ${verdict} |`
  })
  const figureRows = figures.map((f) =>
    `| ${f.name} | ${f.value} | ${
      f.target === undefined ? "" : `${f.target} ${f.met === true ? "met" : "**missed**"}`
    } |`
  )
  return [
    `## ${title}`,
    "",
    ...description,
    "",
    ...(rows.length === 0
      ? []
      : ["| Operation | Ours (median) | Baseline (median) | Ratio | Target |", "|---|---|---|---|---|", ...rows, ""]),
    ...(figureRows.length === 0 ? [] : ["| Figure | Value | Target |", "|---|---|---|", ...figureRows]),
    ""
  ].join("\n")
}
