/**
 * Traces (docs/operations.md): with an OTLP endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT`), every request is a span, with
 * the spans of the engine's work inside it, exported in batches over OTLP/HTTP; without one no span is made at all.
 */
import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http"
import { BatchSpanProcessor, type SpanProcessor } from "@opentelemetry/sdk-trace-base"
import * as Layer from "effect/Layer"

/** Spans to `processor`, as service `arbor`. */
export const layer = (processor: SpanProcessor): Layer.Layer<never> =>
  NodeSdk.layer(() => ({ resource: { serviceName: "arbor" }, spanProcessor: processor }))

/**
 * Spans to the OTLP endpoint the standard `OTEL_EXPORTER_OTLP_*` variables name (the exporter reads them), or
 * nothing without `endpoint`.
 */
export const layerOtlp = (endpoint: string | undefined): Layer.Layer<never> =>
  endpoint === undefined ? Layer.empty : Layer.suspend(() => layer(new BatchSpanProcessor(new OTLPTraceExporter())))
