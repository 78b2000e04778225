/**
 * What a principal holds (`Authorization`): its grants, each the capabilities one binding gives at a group (where its
 * condition holds, if it has one), the decisions read from them, and how they are cached.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import type * as DefaultServices from "effect/DefaultServices"
import type * as Fiber from "effect/Fiber"
import { isAncestor, isAncestorOrSelf, parentOrNull } from "../../engine/Uid.js"
import type { Uid } from "../../engine/Uid.js"
import { all, type Capability, delegating } from "../Capability.js"
import type * as Condition from "../Condition.js"
import type { Narrowing } from "../Principal.js"

/** One binding's contribution: the capabilities held at `group` and below (where its condition holds, if it has one). */
export interface Grant {
  readonly group: Uid
  readonly capabilities: ReadonlySet<Capability>
  /** The binding's condition (DECISIONS §21), as written and compiled. */
  readonly condition?: { readonly written: Condition.Condition; readonly compiled: Condition.Compiled } | undefined
  /** What gave it: a role binding (and when it ends, if it does) or a group mapping, and its role (for explanations). */
  readonly source?:
    | { readonly role: Uid; readonly binding?: Uid; readonly mapping?: Uid; readonly expireTime?: number }
    | undefined
}

/** One conditional grant's outcome in a decision: for explanations. */
export interface ConditionOutcome {
  readonly grant: Grant
  readonly outcome: Condition.Outcome
}

/**
 * What a decision about one resource tells the conditions of the grants that decide it, beyond the moment and the
 * names of the group it is made at (which the decision reads when a condition wants them).
 */
export interface DecisionRequest {
  readonly resource: Omit<Condition.Attributes["resource"], "name" | "path">
  readonly subject: Condition.Attributes["subject"]
  /** The action as asked; the capability decided on when absent. */
  readonly action?: Condition.Attributes["action"]
  readonly context?: Condition.Attributes["context"]
  /** The request's budget for conditions, which its decisions share (DECISIONS §21). */
  readonly budget?: Condition.Attributes["budget"]
}

/**
 * What a principal may do, as of the moment it was loaded: its grants, and apart from them its conditional grants,
 * which count only in a decision that gives their conditions what to read (`decide`). Every other question (lists,
 * searches, what one may delegate) is answered by the unconditional grants alone.
 */
export class Grants {
  constructor(
    /** True for the system principal, which may do anything. */
    readonly unrestricted: boolean,
    readonly grants: ReadonlyArray<Grant>,
    readonly conditional: ReadonlyArray<Grant> = []
  ) {}

  /** Every capability at `group` and below: what the group itself may see (a subscription's deliveries). */
  static everythingAt(group: Uid): Grants {
    return new Grants(false, [{ group, capabilities: new Set(all) }])
  }

  /** True when `capability` is held at `group`. */
  holds(capability: Capability, group: string): boolean {
    return this.unrestricted ||
      this.grants.some((g) => g.capabilities.has(capability) && isAncestorOrSelf(g.group, group))
  }

  /** The grants that give `capability` at `group`: at it or above it. */
  giving(capability: Capability, group: string): ReadonlyArray<Grant> {
    return this.grants.filter((g) => g.capabilities.has(capability) && isAncestorOrSelf(g.group, group))
  }

  /**
   * The conditional grants that would give `capability` at `group` where their conditions hold: none for a
   * capability that delegates (`Capability.delegating`).
   */
  conditionalGiving(capability: Capability, group: string): ReadonlyArray<Grant> {
    return this.conditionalFor(capability).filter((g) => isAncestorOrSelf(g.group, group))
  }

  /** The conditional grants that would give `capability` somewhere: none for a capability that delegates. */
  conditionalFor(capability: Capability): ReadonlyArray<Grant> {
    return this.conditional.length === 0 || delegating.has(capability)
      ? []
      : this.conditional.filter((g) => g.capabilities.has(capability))
  }

  /** Every capability held at `group`, in the canonical order. */
  heldAt(group: string): ReadonlyArray<Capability> {
    if (this.unrestricted) return all
    const held = new Set(
      this.grants.filter((g) => isAncestorOrSelf(g.group, group)).flatMap((g) => [...g.capabilities])
    )
    return all.filter((c) => held.has(c))
  }

  /** True when every one of `capabilities` is held at `group`. */
  holdsAll(capabilities: Iterable<Capability>, group: string): boolean {
    for (const c of capabilities) if (!this.holds(c, group)) return false
    return true
  }

  /**
   * The groups at whose subtrees `capability` is held, none inside another; `"all"` when it is held everywhere.
   */
  scopes(capability: Capability): "all" | ReadonlyArray<Uid> {
    if (this.unrestricted) return "all"
    const groups = [...new Set(this.grants.filter((g) => g.capabilities.has(capability)).map((g) => g.group))]
    return groups.filter((g) => !groups.some((other) => isAncestor(other, g)))
  }

  /**
   * These grants as far as `narrowing` lets them go: each grant's capabilities among the narrowing's, and each grant
   * only where it meets a scope (at the grant's group when the scope is at or above it, at the scope when the scope is
   * below it). Never more than these grants; the system's are never narrowed.
   */
  narrow(narrowing: Narrowing | undefined): Grants {
    if (this.unrestricted || narrowing === undefined) return this
    const { capabilities, scopes } = narrowing
    const kept = capabilities === undefined ? undefined : new Set(capabilities)
    const narrowed = (grants: ReadonlyArray<Grant>) =>
      grants.flatMap((grant) => {
        const held = kept === undefined
          ? grant.capabilities
          : new Set([...grant.capabilities].filter((c) => kept.has(c)))
        if (held.size === 0) return []
        if (scopes === undefined) return [{ ...grant, capabilities: held }]
        return scopes.flatMap((scope) =>
          isAncestorOrSelf(scope, grant.group)
            ? [{ ...grant, capabilities: held }]
            : isAncestor(grant.group, scope)
            ? [{ ...grant, group: scope, capabilities: held }]
            : []
        )
      })
    return new Grants(false, narrowed(this.grants), narrowed(this.conditional))
  }

  /** These grants and `more`. */
  with(more: Grants): Grants {
    return this.unrestricted || (more.grants.length === 0 && more.conditional.length === 0)
      ? this
      : new Grants(false, [...this.grants, ...more.grants], [...this.conditional, ...more.conditional])
  }

  /** Every grant, conditional or not: what whoever could act as their holder must hold already. */
  get everyGrant(): ReadonlyArray<Grant> {
    return this.conditional.length === 0 ? this.grants : [...this.grants, ...this.conditional]
  }
}

/** An identity's grants as cached: what its bindings give, and the providers that deprovisioned it. */
export interface Held {
  /** What its bindings and the mappings of its pushed groups give it. */
  readonly grants: Grants
  /** What its bindings alone give it: the authority its own group mappings rest on. */
  readonly bound: Grants
  /** `grants` with what its bindings that have not started yet will give it, with no write (DECISIONS §21). */
  readonly ahead: Grants
  /** Identity providers whose SCIM clients deactivated or deleted the identity. */
  readonly stopped: ReadonlyArray<Uid>
  /**
   * When a binding's window next opens or closes (epoch milliseconds), after which these grants are no longer
   * current: read again then, with no write needed (DECISIONS §21). Infinity when none has a window ahead.
   */
  readonly changesAt: number
}

/** When what a load read next starts or ends (epoch milliseconds), as it learns of more. */
export interface Edges {
  next: number
}

/** The default services last asked for their clock, and that clock: a fiber's services rarely change. */
let clockOf:
  | { readonly services: Context.Context<DefaultServices.DefaultServices>; readonly clock: Clock.Clock }
  | undefined

/** The time of the clock `fiber` runs with (a test clock in tests), in epoch milliseconds. */
export const nowOf = (fiber: Fiber.RuntimeFiber<unknown, unknown>): number => {
  const services = fiber.currentDefaultServices
  if (clockOf?.services !== services) clockOf = { services, clock: Context.get(services, Clock.Clock) }
  return clockOf.clock.unsafeCurrentTimeMillis()
}

/** `grants` without what they hold in the groups of the identity providers `stopped` (and below). */
export const withdrawn = (grants: Grants, stopped: ReadonlyArray<Uid>): Grants => {
  if (stopped.length === 0) return grants
  const groups = stopped.flatMap((provider) => parentOrNull(provider) ?? [])
  const kept = (of: ReadonlyArray<Grant>) => of.filter((g) => !groups.some((group) => isAncestorOrSelf(group, g.group)))
  return new Grants(false, kept(grants.grants), kept(grants.conditional))
}
