/**
 * Engine settings that deployments may change; every one has a safe default, so providing them is optional.
 */
import * as Context from "effect/Context"
import type { Uid } from "./Uid.js"

/** The engine's settings. */
export interface SettingsService {
  /** Accept `http://` token issuers on loopback hosts (development and tests only). */
  readonly allowLoopbackHttpIssuers: boolean
  /** Accept webhook sinks on loopback hosts, over `http://` too (development and tests only). */
  readonly allowLoopbackSinks?: boolean
  /** Identities that may create root groups (organizations), beside the system principal. */
  readonly platformAdmins: ReadonlyArray<Uid>
}

/** The engine's settings, defaulting to the strictest values. */
export class Settings extends Context.Reference<Settings>()("@arbor/core/Settings", {
  defaultValue: (): SettingsService => ({ allowLoopbackHttpIssuers: false, platformAdmins: [] })
}) {}
