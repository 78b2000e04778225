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
  /** The API's base URL, which the URLs the engine derives start with (a provider's SCIM endpoint); "" by default. */
  readonly apiUrl?: string
}

/** The engine's settings, defaulting to the strictest values. */
export class Settings extends Context.Reference<Settings>()("@arbor/core/Settings", {
  defaultValue: (): SettingsService => ({ allowLoopbackHttpIssuers: false, platformAdmins: [] })
}) {}
