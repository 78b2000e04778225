/** See release.mjs. */
export declare const problemsOf: (
  dir: string,
  manifest: Record<string, unknown>,
  folder: string,
  rootManifest: Record<string, unknown>
) => Array<string>
export declare const release: (
  options: { readonly dryRun: boolean; readonly out?: string | undefined }
) => Array<string>
