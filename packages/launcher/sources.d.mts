/** See sources.mjs. */
export declare const sourceOf: (specifier: string) => string
