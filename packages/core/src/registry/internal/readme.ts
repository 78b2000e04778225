/**
 * The check of a README (docs/api.md §13): rendered by markdown-it (HTML allowed, as Markdown allows it), then
 * written out twice by sanitize-html, once under the README policy and once keeping everything; the two must be
 * equal, so the author learns of anything the sanitizer would take out instead of having it vanish.
 */
import * as Effect from "effect/Effect"
import MarkdownIt from "markdown-it"
import sanitizeHtml from "sanitize-html"
import { FieldViolation, InvalidArgument } from "../../engine/Errors.js"
import { maxLength } from "../RepoReadme.js"

const markdown = new MarkdownIt({ html: true, xhtmlOut: true })

const selfClosing = ["img", "br", "hr", "input", "source", "wbr"]

/** What a README's HTML may hold: what Markdown renders to, and the HTML READMEs commonly use for layout. */
const policy: sanitizeHtml.IOptions = {
  allowedTags: [
    ...sanitizeHtml.defaults.allowedTags,
    "img",
    "picture",
    "source",
    "details",
    "summary",
    "input",
    "del",
    "s",
    "ins",
    "kbd",
    "sup",
    "sub"
  ],
  allowedAttributes: {
    "*": ["id", "align", "title"],
    a: ["href", "name", "target", "rel"],
    img: ["src", "alt", "width", "height"],
    source: ["srcset", "media", "type"],
    code: ["class"],
    ol: ["start"],
    th: ["style"],
    td: ["style"],
    input: ["type", "checked", "disabled"],
    details: ["open"]
  },
  allowedStyles: { "*": { "text-align": [/^(left|right|center)$/] } },
  allowedSchemes: ["http", "https", "mailto"],
  parser: { decodeEntities: false },
  selfClosing
}

/** The same HTML written out as the policy writes it, with nothing taken out: what the policy's result must equal. */
const everything: sanitizeHtml.IOptions = {
  allowedTags: false,
  allowedAttributes: false,
  allowVulnerableTags: true,
  allowedSchemes: ["http", "https", "mailto", "javascript", "vbscript", "data", "file", "ftp", "tel"],
  parser: { decodeEntities: false },
  selfClosing
}

/** Why `content` is not an acceptable README, or undefined when it is. */
export const problem = (content: string): string | undefined => {
  if (content.length > maxLength) return `must be at most ${maxLength} characters`
  const html = markdown.render(content)
  const written = sanitizeHtml(html, everything)
  const sanitized = sanitizeHtml(html, policy)
  if (written === sanitized) return undefined
  let at = 0
  while (written[at] === sanitized[at]) at++
  const from = written.lastIndexOf("<", at)
  const excerpt = written.slice(from < 0 ? at : from, (from < 0 ? at : from) + 60).replace(/\s+/g, " ")
  return `must be Markdown whose HTML a sanitizer leaves as it is; it would change ${JSON.stringify(excerpt)}`
}

/** `content`, or the refusal naming `field`. */
export const check = (content: string, field = "content"): Effect.Effect<string, InvalidArgument> => {
  const description = problem(content)
  return description === undefined
    ? Effect.succeed(content)
    : Effect.fail(new InvalidArgument({ violations: [new FieldViolation({ field, description })] }))
}
