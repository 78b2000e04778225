/** Builds the console for the servers the tests start (only when a source changed since the last build). */
import { ensureBuilt } from "../build.mjs"

export default async () => {
  await ensureBuilt()
}
