/**
 * The API reference at `/docs`: Swagger UI, served with its assets from the installed `swagger-ui-dist` package,
 * reading `/openapi.json`. Nothing is loaded from elsewhere, so it works offline. It shares the console's origin, so
 * it is served under a policy as strict as Swagger UI allows (its styles are partly inline) and never in a frame.
 */
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import * as Effect from "effect/Effect"
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { pagePolicy } from "./Console.js"

const page = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>Arbor management API</title>
    <link rel="stylesheet" href="/docs/swagger-ui.css" />
    <link rel="icon" type="image/png" href="/docs/favicon-32x32.png" />
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="/docs/swagger-ui-bundle.js"></script>
    <script src="/docs/init.js"></script>
  </body>
</html>
`

const init = `window.ui = SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#swagger-ui",
  deepLinking: true,
  validatorUrl: null
})
`

const assets: ReadonlyArray<readonly [string, string]> = [
  ["swagger-ui.css", "text/css; charset=utf-8"],
  ["swagger-ui-bundle.js", "text/javascript; charset=utf-8"],
  ["favicon-32x32.png", "image/png"]
]

/** What the reference page may load and reach: the console's policy, with Swagger UI's inline styles and fonts. */
export const contentSecurityPolicy = pagePolicy({ "style-src": "'self' 'unsafe-inline'", "font-src": "'self' data:" })

const headers = {
  "content-security-policy": contentSecurityPolicy,
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer"
}

/** The reference page and its assets, on the API's router. */
export const layer = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const dir = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"))
    yield* router.get(
      "/docs",
      Effect.succeed(HttpServerResponse.html(page).pipe(HttpServerResponse.setHeaders(headers)))
    )
    yield* router.get(
      "/docs/init.js",
      Effect.succeed(HttpServerResponse.text(init, { contentType: "text/javascript; charset=utf-8", headers }))
    )
    for (const [name, contentType] of assets) {
      const bytes = readFileSync(join(dir, name))
      yield* router.get(
        `/docs/${name}`,
        Effect.succeed(HttpServerResponse.uint8Array(bytes, { contentType, headers }))
      )
    }
  })
)
