/**
 * The public keys and OpenID metadata of upstream token issuers, fetched through discovery within strict limits and
 * cached per issuer (the mechanism is internal: `internal/issuerKeys.ts`). By default it fetches through
 * `Egress`, which connects to public addresses only; `IssuerKeys.DefaultWithoutDependencies` takes any `HttpClient`
 * instead, and with it that duty.
 */
export { IssuerKeys, IssuerKeysUnavailable, limits } from "./internal/issuerKeys.js"
export type { Answer, Keys, Metadata } from "./internal/issuerKeys.js"
