/** @arbor/api: the HTTP API contract of Arbor, for its server and for every client. */
export * as Api from "./Api.js"
export * as ErrorBody from "./ErrorBody.js"
export * as ListQuery from "./ListQuery.js"
export * as OAuth from "./OAuth.js"
export * as Resources from "./Resources.js"
export * as Scim from "./Scim.js"
export * as Security from "./Security.js"
export * as Wire from "./Wire.js"
