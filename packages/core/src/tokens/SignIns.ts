/**
 * The SignIns service (docs/api.md §10): people sign in through an OpenID provider, the server's own or an
 * organization's `IdentityProvider`, with the authorization code flow (PKCE S256, `state`, `nonce`), from a browser
 * that returns to a loopback callback or, headless, through a device authorization (RFC 8628). Every step is kept in
 * the store, so any server may take the next one. The parts are internal: which provider (`providers`), the OpenID
 * client on `oauth4webapi` (`relyingParty`), the code flow, the device flow, and their rows (`records`).
 */
import type * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Errors from "../engine/Errors.js"
import { operation } from "../engine/internal/tracing.js"
import * as Repository from "../engine/Repository.js"
import * as Uid from "../engine/Uid.js"
import { ExternalGroupRoleMappings } from "../iam/ExternalGroupRoleMappings.js"
import * as Identity from "../iam/Identity.js"
import { ScimUsers } from "../provisioning/ScimUsers.js"
import { IssuerKeys } from "./internal/issuerKeys.js"
import * as CodeFlow from "./internal/signIn/codeFlow.js"
import * as DeviceFlow from "./internal/signIn/deviceFlow.js"
import { People } from "./internal/signIn/people.js"
import * as Providers from "./internal/signIn/providers.js"
import * as Records from "./internal/signIn/records.js"
import * as RelyingParty from "./internal/signIn/relyingParty.js"
import { RefreshTokens } from "./RefreshTokens.js"
import * as SignIn from "./SignIn.js"
import { TokenIssuer } from "./TokenIssuer.js"

/** What a sign-in asks for. */
export interface SignInRequest {
  /** `idp_id`: an identity provider's uid, or an organization's uid or name; absent for the server's own. */
  readonly provider?: string | undefined
  /** The audience of the API token; the API's own by default. */
  readonly audience?: string | undefined
  /** The loopback address the browser returns to. */
  readonly callback?: string | undefined
  /** An invite code to redeem at sign-in. */
  readonly invite?: string | undefined
  /** Whether to hand out a refresh token too. */
  readonly refresh?: boolean | undefined
  /**
   * The client's `state`, handed back to its callback beside the tokens (or the failure) as OAuth's is (RFC 6749
   * §4.1.2): a client that keeps it can tell the return of the sign-in it started from a link planted by someone else.
   */
  readonly state?: string | undefined
}

/** What a finished sign-in hands out. */
export interface Tokens {
  readonly token: string
  readonly expiry: DateTime.Utc
  readonly refreshToken?: { readonly token: string; readonly expiry: DateTime.Utc } | undefined
}

/**
 * A finished browser sign-in: the tokens for its callback, or, for a device's, the account it signed in (its client
 * collects the tokens).
 */
export type Completed =
  | {
    readonly _tag: "Browser"
    readonly callback: string
    readonly state?: string | undefined
    readonly tokens: Tokens
  }
  | { readonly _tag: "Device"; readonly account: string }

/** What a device's client is given (RFC 8628 §3.2). */
export interface DeviceAuthorization {
  readonly deviceCode: string
  /** As shown: `ABCD-EFGH`. */
  readonly userCode: string
  readonly expiresIn: number
  readonly interval: number
}

/** The provider's parameters at the callback, and the transaction the browser's cookie names. */
export interface Callback {
  readonly transaction?: string | undefined
  readonly state?: string | undefined
  readonly code?: string | undefined
  readonly error?: string | undefined
  /** The provider's issuer (RFC 9207), where it sends one. */
  readonly iss?: string | undefined
}

/** A browser sign-in begun: its transaction (the browser's cookie names it) and where to send the browser. */
export interface Started {
  readonly transaction: Uid.Uid
  readonly location: string
}

/** The SignIns service: people's sign-in through an OpenID provider, in a browser or from a device (RFC 8628). */
export interface SignInsService {
  /** Begins a browser sign-in through the provider `request` names (the server's own by default). */
  readonly begin: (request: SignInRequest) => Effect.Effect<Started, Errors.ArborError>
  /**
   * Finishes a sign-in at the provider's callback: the transaction the browser's cookie names, its `state` as
   * the provider returned it, then the code redeemed, the person signed in and the tokens handed out. Fails
   * with `SignInFailed`, which names the callback only once `state` matched.
   */
  readonly complete: (callback: Callback) => Effect.Effect<Completed, SignIn.SignInFailed>
  /** Starts a headless sign-in: a device code for the client to poll with, a user code for its person. */
  readonly authorizeDevice: (
    request: Omit<SignInRequest, "callback">
  ) => Effect.Effect<DeviceAuthorization, Errors.ArborError>
  /** The user code of a device authorization still waiting for its person, as shown; NotFound otherwise. */
  readonly pendingDevice: (userCode: string) => Effect.Effect<string, Errors.StoreFailure | Errors.NotFound>
  /** Starts the sign-in of the person who confirmed a device's user code. */
  readonly beginDevice: (userCode: string) => Effect.Effect<Started, Errors.ArborError>
  /** The person refused a device's sign-in: its client gets `access_denied`. */
  readonly denyDevice: (
    userCode: string
  ) => Effect.Effect<void, Errors.StoreFailure | Errors.FailedPrecondition | Errors.NotFound>
  /**
   * A device's poll (RFC 8628 §3.4): the tokens once its person has signed in (once), else why not yet or not at
   * all; a poll sooner than the interval after the last one slows the client down.
   */
  readonly poll: (
    deviceCode: string
  ) => Effect.Effect<Tokens, Errors.StoreFailure | Errors.FailedPrecondition | SignIn.DeviceGrantError>
}

/** Sign-ins. */
export class SignIns extends Effect.Service<SignIns>()("@arbor/core/SignIns", {
  effect: Effect.gen(function*() {
    const tokens = yield* TokenIssuer
    const refreshTokens = yield* RefreshTokens
    const mappings = yield* ExternalGroupRoleMappings
    const people = yield* People
    const scim = yield* ScimUsers
    const login = yield* SignIn.LoginSettings
    const identities = yield* Repository.make(Identity.table, Identity.Identity)
    const records = yield* Records.make
    const providers = yield* Providers.make
    const relyingParty = yield* RelyingParty.make
    const devices = yield* DeviceFlow.make(records)
    const code = yield* CodeFlow.make({
      records,
      providers,
      relyingParty,
      redirectUri: login.redirectUri ?? `${tokens.issuer}/oauth/callback`
    })

    /** Fails when the provider's SCIM client has deactivated or deleted the person `subject` (docs/api.md §13). */
    const admitted = (provider: Uid.Uid, subject: string) =>
      Effect.flatMap(scim.refuses(provider, subject), (refused) =>
        refused
          ? Effect.fail(
            new Errors.Unauthenticated({
              why: "your organization's identity provider has deactivated your account here",
              reason: "DEPROVISIONED"
            })
          )
          : Effect.void)

    const audienceOf = (audience: string | undefined) =>
      audience === undefined || audience === ""
        ? Effect.succeed(tokens.audience)
        : tokens.audiences.includes(audience)
        ? Effect.succeed(audience)
        : Effect.fail(
          Errors.InvalidArgument.field("audience", "must be the API's base URL or another configured audience")
        )

    /**
     * The API token of a person (recording the provider's issuer and their subject there, and carrying their
     * verified email and the group mappings this sign-in gave) and, when asked, a refresh token (whose API tokens
     * carry no mappings: they are this sign-in's only).
     */
    const handOut = (
      identity: Identity.Identity,
      audience: string,
      refresh: boolean,
      mappings: ReadonlyArray<Uid.Uid> | null,
      provider: Uid.Uid | undefined
    ) =>
      Effect.gen(function*() {
        const minted = yield* tokens.mint(
          identity.uid,
          { iss: identity.issuer, sub: identity.subject },
          audience,
          { email: identity.email, mappings: mappings ?? undefined, provider }
        )
        // No refresh token with mapped roles (DECISIONS §15): a token it refreshed would silently lose them.
        const mapped = mappings !== null && mappings.length > 0
        const refreshToken = refresh && !mapped
          ? yield* refreshTokens.issue(identity.uid, audience, provider)
          : undefined
        return { ...minted, refreshToken } satisfies Tokens
      })

    const service: SignInsService = {
      begin: (request: SignInRequest) =>
        operation("SignIns.begin")(Effect.gen(function*() {
          const audience = yield* audienceOf(request.audience)
          const callback = request.callback ?? ""
          if (!SignIn.isLoopbackCallback(callback) && !(login.ownCallbacks ?? []).includes(callback)) {
            return yield* Errors.InvalidArgument.field(
              "redirect",
              "must be a loopback address: http://localhost:<port>/…, http://127.0.0.1:<port>/… or http://[::1]:<port>/…"
            )
          }
          return yield* code.begin({ ...request, audience, callback: request.callback!, device: null })
        })),

      complete: (callback: Callback): Effect.Effect<Completed, SignIn.SignInFailed> =>
        operation("SignIns.complete")(Effect.gen(function*() {
          const transaction = yield* code.arrive(callback).pipe(
            Effect.mapError((cause) => new SignIn.SignInFailed({ cause }))
          )
          const to = transaction.callback ?? undefined
          const state = transaction.clientState ?? undefined
          const device = transaction.device ?? undefined
          const steps = Effect.gen(function*() {
            const { claims, provider } = yield* code.redeem(transaction, callback)
            if (provider.record !== undefined) yield* admitted(provider.record.uid, claims.subject)
            const person = yield* people.signIn(claims, {
              provider: provider.record,
              invite: transaction.invite ?? undefined
            })
            // The groups claim of an organization's provider: the roles its group mappings give, for this sign-in.
            const mapped = provider.record === undefined || claims.groups === undefined
              ? null
              : (yield* mappings.forSignIn(provider.record.uid, claims.groups)).map((m) => m.uid)
            if (device !== undefined) {
              if (!(yield* devices.decide(device, { status: "approved", identity: person.uid, mappings: mapped }))) {
                return yield* DeviceFlow.alreadyDecided()
              }
              return { _tag: "Device", account: claims.email ?? claims.name ?? claims.subject } as const
            }
            const handed = yield* handOut(
              person,
              transaction.audience,
              transaction.refresh,
              mapped,
              provider.record?.uid
            )
            return { _tag: "Browser", callback: to!, state, tokens: handed } as const
          })
          return yield* steps.pipe(
            Effect.tapError(() =>
              device === undefined ? Effect.void : Effect.ignore(devices.decide(device, { status: "denied" }))
            ),
            Effect.catchAll((cause: Errors.ArborError) =>
              Effect.fail(new SignIn.SignInFailed({ cause, ...(to === undefined ? {} : { callback: to, state }) }))
            )
          )
        })),

      authorizeDevice: (
        request: Omit<SignInRequest, "callback">
      ): Effect.Effect<DeviceAuthorization, Errors.ArborError> =>
        operation("SignIns.authorizeDevice")(Effect.gen(function*() {
          const audience = yield* audienceOf(request.audience)
          const provider = yield* providers.resolve(request.provider)
          return yield* devices.authorize({ ...request, provider: provider.id, audience })
        })),

      pendingDevice: (userCode: string) =>
        operation("SignIns.pendingDevice")(
          Effect.map(devices.pending(userCode), (device) => SignIn.formatUserCode(device.userCode))
        ),

      beginDevice: (userCode: string) =>
        operation("SignIns.beginDevice")(Effect.flatMap(devices.pending(userCode), (device) =>
          code.begin({
            provider: device.provider || undefined,
            audience: device.audience,
            invite: device.invite ?? undefined,
            refresh: device.refresh,
            callback: null,
            device: device.uid
          }))),

      denyDevice: (userCode: string) =>
        operation("SignIns.denyDevice")(Effect.flatMap(
          devices.pending(userCode),
          (device) =>
            Effect.flatMap(devices.decide(device.uid, { status: "denied" }), (denied) =>
              denied ? Effect.void : Effect.fail(DeviceFlow.alreadyDecided()))
        )),

      poll: (deviceCode: string) =>
        operation("SignIns.poll")(Effect.gen(function*() {
          const approved = yield* devices.poll(deviceCode)
          const person = yield* identities.get(approved.identity ?? "")
          if (Option.isNone(person)) {
            return yield* new SignIn.DeviceGrantError({
              error: "access_denied",
              description: "the person's identity is gone"
            })
          }
          const provider = Uid.isUid(approved.provider) && Uid.parentOrNull(approved.provider) !== null
            ? approved.provider
            : undefined
          if (provider !== undefined) {
            yield* admitted(provider, person.value.subject).pipe(
              Effect.catchTag(
                "Unauthenticated",
                (e) => new SignIn.DeviceGrantError({ error: "access_denied", description: e.why })
              )
            )
          }
          return yield* handOut(person.value, approved.audience, approved.refresh, approved.mappings, provider)
        }))
    }
    return service
  }),
  dependencies: [IssuerKeys.Default]
}) {}
