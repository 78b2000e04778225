/**
 * The pages people see while signing in: server-rendered HTML with no script and no external asset, one inline
 * style allowed by its hash in a strict Content-Security-Policy, readable on a phone.
 */
import { HttpServerResponse } from "@effect/platform"
import { createHash } from "node:crypto"

const style = `body{font:16px/1.5 system-ui,sans-serif;margin:0;padding:0 1rem;background:#f6f7f9;color:#1d2330}
main{max-width:28rem;margin:12vh auto;padding:2rem;background:#fff;border-radius:12px;box-shadow:0 1px 4px #0002}
h1{font-size:1.4rem;margin:0 0 1rem}p{margin:0 0 1rem}.error h1{color:#b42318}
.code{font:600 2rem/1.2 ui-monospace,monospace;letter-spacing:.15em;text-align:center;margin:1rem 0}
input{font:600 1.4rem ui-monospace,monospace;letter-spacing:.1em;width:100%;box-sizing:border-box;padding:.6rem;
text-transform:uppercase;border:1px solid #98a2b3;border-radius:8px}
.actions{display:flex;gap:.75rem;margin-top:1rem}button,a.button{flex:1;font:inherit;padding:.7rem;border-radius:8px;
border:1px solid #98a2b3;background:#fff;cursor:pointer;text-align:center;text-decoration:none;color:inherit}
button.primary,a.button{background:#1d4ed8;border-color:#1d4ed8;color:#fff}small,.server{color:#667085}
.server{margin-top:-.75rem}`

/** What every page may load: nothing but its own inline style. */
export const contentSecurityPolicy = [
  "default-src 'none'",
  `style-src 'sha256-${createHash("sha256").update(style).digest("base64")}'`,
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'"
].join("; ")

const escape = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" })[c]!)

/** Text that is already HTML (built from escaped parts). */
interface Html {
  readonly html: string
}

/** An HTML fragment with its interpolated values escaped. */
export const html = (strings: TemplateStringsArray, ...values: ReadonlyArray<string | Html>): Html => ({
  html: strings.reduce(
    (out, s, i) =>
      out + s +
      (i < values.length
        ? (typeof values[i] === "string" ? escape(values[i] as string) : (values[i] as Html).html)
        : ""),
    ""
  )
})

/**
 * A whole page as a response, with the headers every page carries. Each page says which server it is (`server`,
 * the host of its address), so that a person never wonders where they are signing in.
 */
export const page = (
  server: string,
  title: string,
  body: Html,
  options: { readonly status?: number; readonly error?: boolean; readonly head?: Html } = {}
) =>
  HttpServerResponse.html(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escape(title)} · Arbor</title>
<style>${style}</style>
${options.head?.html ?? ""}
</head>
<body>
<main${options.error === true ? " class=\"error\"" : ""}>
<h1>${escape(title)}</h1>
<p class="server">Arbor at <strong>${escape(server)}</strong></p>
${body.html}
</main>
</body>
</html>
`).pipe(
      HttpServerResponse.setStatus(options.status ?? 200),
      HttpServerResponse.setHeaders({
        "content-security-policy": contentSecurityPolicy,
        "x-frame-options": "DENY",
        "x-content-type-options": "nosniff",
        "referrer-policy": "no-referrer",
        "cache-control": "no-store"
      })
    )

/** The page for a sign-in that cannot go on. */
export const error = (server: string, status: number, message: string) =>
  page(
    server,
    "Sign-in failed",
    html`<p>${message}</p><p><small>Start the sign-in again from your command line.</small></p>`,
    { status, error: true }
  )

/** The page after a device's sign-in, naming the account it signed in. */
export const signedIn = (server: string, account: string) =>
  page(
    server,
    "Signed in",
    html`<p>You are signed in to ${server} as <strong>${account}</strong>. Your device will pick up its token in a moment.</p><p>You can close this window.</p>`
  )

/** The page after a person refused a device's sign-in. */
export const refused = (server: string) =>
  page(
    server,
    "Sign-in refused",
    html`<p>The device will not be signed in. You can close this window.</p>`
  )

/** The form where a person types the code their device shows. */
export const enterCode = (server: string, action: string, message?: string) =>
  page(
    server,
    "Sign in a device",
    html`${message === undefined ? html`` : html`<p class="error">${message}</p>`}
<form method="get" action="${action}">
<p><label for="user_code">Enter the code your device shows:</label></p>
<input id="user_code" name="user_code" autocomplete="off" autocapitalize="characters" spellcheck="false" maxlength="9" placeholder="ABCD-EFGH" required autofocus>
<div class="actions"><button class="primary" type="submit">Continue</button></div>
</form>`,
    { status: message === undefined ? 200 : 404 }
  )

/** The page where a person confirms (or refuses) the code their device shows. */
export const confirmCode = (server: string, action: string, userCode: string, csrf: string) =>
  page(
    server,
    "Sign in a device",
    html`<p>A device asks to be signed in to ${server}. Check that it shows this code:</p>
<p class="code">${userCode}</p>
<p>Only continue if you started this sign-in yourself.</p>
<form method="post" action="${action}">
<input type="hidden" name="user_code" value="${userCode}">
<input type="hidden" name="csrf" value="${csrf}">
<div class="actions"><button class="primary" type="submit" name="action" value="approve">Sign in</button>
<button type="submit" name="action" value="deny">Refuse</button></div>
</form>`
  )

/** The step from the confirmation to the provider: a link, followed at once. */
export const continueTo = (server: string, location: string) => {
  const host = new URL(location).host
  return page(
    server,
    "Continue to sign in",
    html`<p>Sign in at <strong>${host}</strong> to continue to ${server}.</p>
<div class="actions"><a class="button" href="${location}">Continue</a></div>`,
    { head: html`<meta http-equiv="refresh" content="0;url=${location}">` }
  )
}
