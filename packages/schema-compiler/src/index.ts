/** @arbor/schema-compiler: decoders and encoders compiled once from an Effect schema's AST. */
export * as CompiledSchema from "./CompiledSchema.js"
