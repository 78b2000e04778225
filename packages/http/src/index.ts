/** @arbor/http: the HTTP server of Arbor. */
export * as Authentication from "./Authentication.js"
export * as Bootstrap from "./Bootstrap.js"
export * as DataDir from "./DataDir.js"
export * as Handlers from "./Handlers.js"
export * as Middleware from "./Middleware.js"
export * as Server from "./Server.js"
export * as ServerConfig from "./ServerConfig.js"
