/**
 * The server's metrics (docs/operations.md): requests and gRPC calls with their latencies, store statement timings,
 * open connections, and the engine's own (authorization cache lookups, token exchanges), all Effect `Metric`s,
 * served at `/metrics` in the Prometheus text format by OpenTelemetry's Prometheus exporter. Recording a value
 * updates an in-memory metric; the exporter reads them only when scraped.
 */
import { Api } from "@arbor/api/Api"
import * as OAuth from "@arbor/api/OAuth"
import { ServerReflection } from "@arbor/api/proto/grpc/reflection/v1/reflection_pb"
import { Errors, NetworkAddress } from "@arbor/core"
import type { Store } from "@arbor/core"
import * as OtelMetrics from "@effect/opentelemetry/Metrics"
import * as Resource from "@effect/opentelemetry/Resource"
import { HttpApi, HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { PrometheusExporter, PrometheusSerializer } from "@opentelemetry/exporter-prometheus"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import * as MetricLabel from "effect/MetricLabel"
import * as Redacted from "effect/Redacted"
import { createHash, timingSafeEqual } from "node:crypto"
import * as Authentication from "./Authentication.js"
import * as ClientAddress from "./ClientAddress.js"
import * as GrpcServices from "./GrpcServices.js"

/** Where the metrics are scraped. */
const path = "/metrics"

/** Latency buckets, in seconds: 0.5 ms to about 8 s, doubling. */
const latency = MetricBoundaries.exponential({ start: 0.0005, factor: 2, count: 15 })

const httpRequests = Metric.counter("arbor_http_requests", {
  description: "HTTP requests answered, by route, method and status code",
  incremental: true
})
const httpDuration = Metric.histogram(
  "arbor_http_request_duration_seconds",
  latency,
  "time from a request's arrival to its answer, by route and method"
)
const grpcCalls = Metric.counter("arbor_grpc_calls", {
  description: "gRPC, gRPC-Web and Connect calls answered, by method and gRPC status code",
  incremental: true
})
const grpcDuration = Metric.histogram(
  "arbor_grpc_call_duration_seconds",
  latency,
  "time from a call's arrival to its answer, by method"
)
const storeDuration = Metric.histogram(
  "arbor_store_statement_duration_seconds",
  MetricBoundaries.exponential({ start: 0.00005, factor: 2, count: 16 }),
  "time of a store operation (a statement, or a whole transaction), by operation and table"
)

/** Connections open now, HTTP/1.1 and HTTP/2. */
export const openConnections = Metric.gauge("arbor_open_connections", {
  description: "client connections open now, HTTP/1.1 and HTTP/2"
})

/** The process's memory, read when scraped: its V8 heap in use, and what it holds resident. */
const heapUsed = Metric.gauge("arbor_process_heap_used_bytes", {
  description: "the V8 heap in use (live objects and garbage not yet collected), read when scraped"
})
const resident = Metric.gauge("arbor_process_resident_memory_bytes", {
  description: "the process's resident memory, read when scraped"
})
const readMemory = Effect.suspend(() => {
  const { heapUsed: used, rss } = process.memoryUsage()
  return Effect.zipRight(Metric.set(heapUsed, used), Metric.set(resident, rss))
})

/** The route templates of the API and the server's own pages, by method: the only `route` labels there are. */
const templates = (() => {
  const known = new Set<string>()
  HttpApi.reflect(Api, {
    onGroup: () => undefined,
    onEndpoint: ({ endpoint }) => known.add(`${endpoint.method} ${endpoint.path}`)
  })
  for (const page of Object.values(OAuth.paths)) {
    known.add(`GET ${page}`)
    known.add(`POST ${page}`)
  }
  for (const page of ["/docs", "/openapi.json", path]) known.add(`GET ${page}`)
  return known
})()

/** A uid in a path, folded or not: what `:uid` stands for in the templates. */
const uidInPath = /[0-9a-f]{40}(?:(?:\/|%2F)[0-9a-f]{16})*/gi

/** The route label of a request: its template, or `unmatched` (so that labels stay few, whatever is requested). */
const route = (method: string, path: string): string => {
  const template = path.replace(uidInPath, ":uid")
  return templates.has(`${method} ${template}`) ? template : "unmatched"
}

const rpcs = new Set(
  [...GrpcServices.served, ServerReflection].flatMap((s) => s.methods.map((m) => `/${s.typeName}/${m.name}`))
)

/** `make(...labels)`, made once per distinct labels: tagging a metric makes a new key each time. */
const perLabels = <A>(make: (...labels: Array<string>) => A) => {
  const made = new Map<string, A>()
  return (...labels: Array<string>): A => {
    const key = labels.join("\u0000")
    let metric = made.get(key)
    if (metric === undefined) made.set(key, metric = make(...labels))
    return metric
  }
}

const labels = (values: Record<string, string>) =>
  Object.entries(values).map(([key, value]) => MetricLabel.make(key, value))

const requestCounter = perLabels((route, method, code) =>
  Metric.taggedWithLabels(httpRequests, labels({ route, method, code }))
)
const requestTimer = perLabels((route, method) => Metric.taggedWithLabels(httpDuration, labels({ route, method })))
const callCounter = perLabels((rpc, code) => Metric.taggedWithLabels(grpcCalls, labels({ rpc, code })))
const callTimer = perLabels((rpc) => Metric.taggedWithLabels(grpcDuration, labels({ rpc })))
const storeTimer = perLabels((operation, table) => Metric.taggedWithLabels(storeDuration, labels({ operation, table })))

/** Records an answered HTTP request. */
export const recordRequest = (method: string, path: string, status: number, seconds: number) => {
  const label = route(method, path)
  return Effect.zipRight(
    Metric.increment(requestCounter(label, method, String(status))),
    Metric.update(requestTimer(label, method), seconds)
  )
}

/** Records an answered gRPC call. */
export const recordCall = (path: string, code: number, seconds: number) => {
  const rpc = rpcs.has(path) ? path.slice(1) : "unknown"
  return Effect.zipRight(Metric.increment(callCounter(rpc, String(code))), Metric.update(callTimer(rpc), seconds))
}

const pruned = Metric.counter("arbor_change_log_pruned", {
  description: "change-log entries removed because they were older than the retention",
  incremental: true
})

const deliveries = Metric.counter("arbor_webhook_deliveries", {
  description: "webhook deliveries, by outcome: delivered, failed (retried), abandoned (after 24 hours)",
  incremental: true
})
const deliveryLag = Metric.histogram(
  "arbor_webhook_delivery_lag_seconds",
  MetricBoundaries.exponential({ start: 0.005, factor: 2, count: 16 }),
  "from an entry's commit to its delivery's answer"
)

const deliveriesBy = perLabels((outcome) => Metric.taggedWithLabels(deliveries, labels({ outcome })))

/** Counts a delivery by its outcome; a delivered one's lag (milliseconds since its entry) too. */
export const recordDelivery = (outcome: "delivered" | "failed" | "abandoned", lagMillis?: number) =>
  Effect.zipRight(
    Metric.increment(deliveriesBy(outcome)),
    outcome === "delivered" && lagMillis !== undefined ? Metric.update(deliveryLag, lagMillis / 1000) : Effect.void
  )

const pendingDeliveries = Metric.gauge("arbor_webhook_deliveries_pending", {
  description: "change-log entries waiting to be delivered to a subscription, by subscription (its uid)"
})

/** Sets how many entries wait for `subscription`. */
export const recordPending = (subscription: string, count: number) =>
  Metric.set(Metric.taggedWithLabels(pendingDeliveries, labels({ subscription })), count)

/** Counts change-log entries removed by the retention. */
export const recordPruned = (count: number) => Metric.incrementBy(pruned, count)

/** `store`, each operation timed into `arbor_store_statement_duration_seconds`. */
export const timedStore = (store: Store.StoreService): Store.StoreService => {
  const timed = <A, E, R>(operation: string, table: string, effect: Effect.Effect<A, E, R>) =>
    Effect.flatMap(Effect.sync(() => performance.now()), (started) =>
      Effect.ensuring(
        effect,
        Effect.suspend(() => Metric.update(storeTimer(operation, table), (performance.now() - started) / 1000))
      ))
  return {
    get: (table, uid) => timed("get", table.name, store.get(table, uid)),
    getMany: (table, uids) => timed("getMany", table.name, store.getMany(table, uids)),
    find: (table, query) => timed("find", table.name, store.find(table, query)),
    count: (table, query) => timed("count", table.name, store.count(table, query)),
    insert: (table, row) => timed("insert", table.name, store.insert(table, row)),
    insertMany: (table, rows) => timed("insertMany", table.name, store.insertMany(table, rows)),
    update: (table, row) => timed("update", table.name, store.update(table, row)),
    delete: (table, where) => timed("delete", table.name, store.delete(table, where)),
    transaction: (effect) => timed("transaction", "", store.transaction(effect)),
    claim: (name) => timed("claim", "", store.claim(name)),
    settledPosition: timed("settledPosition", "", store.settledPosition),
    changeMarker: store.changeMarker
  }
}

/** The exporter the scrapes read. */
class Exporter extends Context.Tag("@arbor/http/Metrics/Exporter")<Exporter, PrometheusExporter>() {}

/** The exporter, registered as a reader of Effect's metrics. */
const exporterLayer = Layer.unwrapEffect(Effect.sync(() => {
  const exporter = new PrometheusExporter({ preventServerStart: true })
  return OtelMetrics.layer(() => exporter).pipe(
    Layer.provide(Resource.layer({ serviceName: "arbor" })),
    Layer.merge(Layer.succeed(Exporter, exporter))
  )
}))

const serializer = new PrometheusSerializer()

/** True when `presented` is `expected`, in time that does not depend on where they differ. */
const sameToken = (presented: string, expected: string) => {
  const a = createHash("sha256").update(presented).digest()
  const b = createHash("sha256").update(expected).digest()
  return timingSafeEqual(a, b)
}

/**
 * Who may scrape: with `token`, whoever presents it as a bearer; without one, clients on this machine only. The
 * metrics hold no names, but their counts (token exchanges by the reason kept from the caller, cache misses) would
 * tell an outsider what the API's answers keep from it.
 */
const admitted = (token: Redacted.Redacted | undefined, clientAddressHeader: string | undefined) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    if (token === undefined) {
      // A client on this machine: the only one that may scrape without a token. Behind a proxy on this machine,
      // every connection is local: the client is the one the proxy names.
      if (NetworkAddress.kind(ClientAddress.of(request, clientAddressHeader)) === "loopback") return
      return yield* new Errors.PermissionDenied({ capability: "metrics.read", resource: path })
    }
    const presented = Authentication.bearerIn(request.headers.authorization)
    if (presented === "") return yield* Authentication.missing()
    if (!sameToken(presented, Redacted.value(token))) {
      return yield* new Errors.Unauthenticated({
        why: "the bearer token is not the metrics token",
        reason: "INVALID_TOKEN"
      })
    }
  })

/** `GET /metrics`, in the Prometheus text format, for whoever `admitted` lets in. */
export const layer = (token: Redacted.Redacted | undefined, clientAddressHeader: string | undefined) =>
  HttpApiBuilder.Router.use((router) =>
    Effect.flatMap(Exporter, (exporter) =>
      router.get(
        path,
        admitted(token, clientAddressHeader).pipe(
          Effect.zipRight(readMemory),
          Effect.zipRight(Effect.promise(() => exporter.collect())),
          Effect.map(({ resourceMetrics }) =>
            HttpServerResponse.text(serializer.serialize(resourceMetrics), {
              contentType: "text/plain; version=0.0.4; charset=utf-8"
            })
          )
        )
      ))
  ).pipe(Layer.provide(exporterLayer))
