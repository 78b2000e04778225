/**
 * Tokens and health (`@arbor/api`'s `methods/tokens.ts`): the token exchange, the refresh token exchange, the
 * issuer's discovery documents, and the health probes; over gRPC, SecurityTokenService.
 */
import { Health, TokenService, UpstreamToken } from "@arbor/api/Api"
import { SecurityTokenService } from "@arbor/api/proto/platform/oidc/v1/oidc.platform_pb"
import { Arbor, Errors, SignIn } from "@arbor/core"
import { timestampFromMs } from "@bufbuild/protobuf/wkt"
import { HttpApiBuilder } from "@effect/platform"
import type * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Domain from "../internal/domain.js"
import { firstSet, refusedUnless } from "../internal/grpc.js"
import { serve } from "../internal/rest.js"

/** A token as the protos carry it. */
const rawToken = (exchanged: { readonly token: string; readonly expiry: DateTime.Utc }) => ({
  token: exchanged.token,
  expiry: timestampFromMs(exchanged.expiry.epochMillis)
})

/** The one audience a gRPC exchange may name. */
const audience = (aud: ReadonlyArray<string>) =>
  aud.length > 1
    ? Effect.fail(Errors.InvalidArgument.field("aud", "must name one audience"))
    : Effect.succeed(aud[0])

export const tokens = Domain.make({
  rest: ({ refreshTokens, store, sts, tokens }) => {
    const exchange = ({ urlParams }: {
      readonly urlParams: {
        readonly aud?: string | undefined
        readonly identity?: string | undefined
        readonly cap?: ReadonlyArray<string> | undefined
        readonly scope?: ReadonlyArray<string> | undefined
      }
    }) =>
      Effect.flatMap(UpstreamToken, (token) =>
        sts.exchange({
          token,
          audience: urlParams.aud,
          identity: urlParams.identity,
          capabilities: urlParams.cap,
          scopes: urlParams.scope
        }))
    return Layer.merge(
      HttpApiBuilder.group(serve(TokenService), "sts", (h) =>
        h
          .handle("exchange", exchange)
          .handle("exchangePost", exchange)
          .handle("exchangeRefreshToken", ({ urlParams }) =>
            Effect.flatMap(UpstreamToken, (token) =>
              refreshTokens.exchange(token, urlParams.aud, { capabilities: urlParams.cap, scopes: urlParams.scope })))
          .handle("configuration", () =>
            Effect.succeed(SignIn.openIdConfiguration(tokens.issuer)))
          .handle("authorizationServer", () =>
            Effect.succeed(SignIn.authorizationServerMetadata(tokens.issuer)))
          .handle("jwks", () => tokens.jwks)),
      HttpApiBuilder.group(serve(Health), "health", (h) =>
        h
          .handle("live", () => Effect.succeed({ status: "ok" as const }))
          .handle("ready", () => Effect.as(Arbor.ready(store), { status: "ready" as const })))
    )
  },
  services: [SecurityTokenService],
  grpc: ({ refreshTokens, sts }, run, router) =>
    router.service(SecurityTokenService, {
      exchange: (request, context) =>
        run.withBearer(
          context,
          (upstream) =>
            refusedUnless(firstSet({ identityProvider: request.identityProvider !== "" })).pipe(
              Effect.zipRight(audience(request.aud)),
              Effect.flatMap((aud) =>
                sts.exchange({
                  token: upstream,
                  audience: aud,
                  identity: request.identity,
                  capabilities: request.cap,
                  scopes: request.scopes
                })
              ),
              Effect.map(rawToken)
            )
        ),
      exchangeRefreshToken: (request, context) =>
        run.withBearer(
          context,
          (refresh) =>
            Effect.flatMap(
              audience(request.aud),
              (aud) => refreshTokens.exchange(refresh, aud, { capabilities: request.cap, scopes: request.scopes })
            ).pipe(
              Effect.map((refreshed) => ({
                token: rawToken(refreshed.token),
                refreshToken: rawToken(refreshed.refreshToken)
              }))
            )
        )
    })
})
