/**
 * The wire format (docs/api.md §2, §9): the JSON shape of every resource in v2beta1 and in v1, each a `Schema` from
 * that JSON to the engine's own resource class. A server encodes what the engine returns through them; a client
 * decodes responses through them into the same classes. Times are RFC 3339 UTC with milliseconds; v1 renames `uid`,
 * `createTime` and `updateTime` to `id`, `createdAt` and `updatedAt` and spells capabilities dotted, v2 as enum names.
 *
 * Here the public names; in `wire/` how a resource is shaped (`shapes`), the IAM resources (`iam`), the registry's
 * (`registry`) and the change log's entries with the list envelopes (`changeLog`).
 */
export * from "./wire/changeLog.js"
export * from "./wire/iam.js"
export * from "./wire/registry.js"
export { Duration, type Resource, Time, Uid, type V1Fields } from "./wire/shapes.js"
