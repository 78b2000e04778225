/**
 * One PostgreSQL server for a test project (`EmbeddedPostgres`), stopped and removed when the tests end. Tests get
 * its URL by `inject("postgresUrl")`.
 */
import type { TestProject } from "vitest/node"
import { EmbeddedPostgres } from "../src/testing/index.js"

declare module "vitest" {
  export interface ProvidedContext {
    postgresUrl: string
  }
}

export default async function setup(project: TestProject) {
  const server = await EmbeddedPostgres.start()
  project.provide("postgresUrl", server.url)
  return server.stop
}
