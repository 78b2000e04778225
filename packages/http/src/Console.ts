/**
 * The console (docs/console.md) at `/console`: the static assets `@arbor/console` builds (its page, script and
 * style), served with a strict Content-Security-Policy that lets the page load its own script and style and talk
 * to this server only; the console routes in the page's fragment (`/console/#/groups/…`). A browser at the
 * server's address (`GET /` asking for HTML) is sent there; an API client there is told where the reference, the
 * OpenAPI document and the console are. Without a built console (`pnpm build` builds it; the launcher and the tests do too) `/console` answers 503
 * saying so.
 */
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import * as Effect from "effect/Effect"
import { existsSync, readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"

/** The console's address on a server whose base URL is `baseUrl`: where its sign-ins return. */
export const addressOf = (baseUrl: string) => `${baseUrl}/console/`

/** The policy of the server's own pages: nothing from elsewhere, never framed; `directives` replace or add some. */
export const pagePolicy = (directives: Readonly<Record<string, string>> = {}) =>
  Object.entries({
    "default-src": "'none'",
    "script-src": "'self'",
    "style-src": "'self'",
    "connect-src": "'self'",
    "img-src": "'self' data:",
    "form-action": "'self'",
    "frame-ancestors": "'none'",
    "base-uri": "'none'",
    ...directives
  }).map(([name, value]) => `${name} ${value}`).join("; ")

/** What the console's page may load and reach: its own script and style, and this server. */
export const contentSecurityPolicy = pagePolicy()

const headers = {
  "content-security-policy": contentSecurityPolicy,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-cache"
}

/** The built console's files, by name, with their media types. */
const files: ReadonlyArray<readonly [string, string]> = [
  ["console.js", "text/javascript; charset=utf-8"],
  ["console.css", "text/css; charset=utf-8"]
]

/** The folder of the built console, when it is installed. */
const builtConsole = (): string | undefined => {
  try {
    return join(dirname(createRequire(import.meta.url).resolve("@arbor/console/package.json")), "dist")
  } catch {
    return undefined
  }
}

const notBuilt = HttpServerResponse.text(
  "The console is not built: run `pnpm build` (or start the server with `pnpm start`, which builds it).\n",
  { status: 503, headers }
)

/** What `GET /` answers a client that is not a browser: where to go from here. */
const entrances = {
  name: "Arbor",
  description: "Arbor's management API: groups, identities, roles and role bindings, and the token exchange",
  docs: "/docs",
  openapi: "/openapi.json",
  console: "/console/"
}

/**
 * The console's page and assets, and `/`: browsers sent there, other clients told where the API is described. The
 * page says whether the server has a sign-in provider of its own (`<meta name="arbor-sign-in">`: `provider` or
 * `token`), so that the console offers first what works.
 */
export const layer = (options: { readonly signInProvider: boolean }) =>
  HttpApiBuilder.Router.use((router) =>
    Effect.gen(function*() {
      const dir = builtConsole()
      const built = dir !== undefined && existsSync(join(dir, "index.html"))
      const signIn = `<meta name="arbor-sign-in" content="${options.signInProvider ? "provider" : "token"}" />`
      const page = built
        ? HttpServerResponse.text(
          readFileSync(join(dir, "index.html"), "utf8").replace("</head>", `    ${signIn}\n  </head>`),
          { contentType: "text/html; charset=utf-8", headers }
        )
        : notBuilt
      yield* router.get(
        "/",
        Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
          (request.headers.accept ?? "").includes("text/html")
            ? Effect.succeed(HttpServerResponse.redirect("/console/", { status: 303 }))
            : Effect.succeed(HttpServerResponse.unsafeJson(entrances)))
      )
      // The router takes `/console` and `/console/` alike.
      yield* router.get("/console/", Effect.succeed(page))
      for (const [name, contentType] of files) {
        const response = built
          ? HttpServerResponse.uint8Array(readFileSync(join(dir, name)), { contentType, headers })
          : notBuilt
        yield* router.get(`/console/${name}`, Effect.succeed(response))
      }
    })
  )
