import CoreMetrics
import Foundation
import PhotoServices
import Prometheus
import Synchronization

/// What `/metrics` shows, through swift-metrics with swift-prometheus as the backend. The server owns
/// its registry (no global bootstrap): two servers in one process keep separate numbers.
final class ServerMetrics: Sendable {
    let registry: PrometheusCollectorRegistry
    private let factory: PrometheusMetricsFactory
    let bytesReceived: CoreMetrics.Counter
    let uploadsInProgress: CoreMetrics.Meter
    let pipelineSeconds: CoreMetrics.Timer
    let photosStored: CoreMetrics.Counter
    /// How long the upload hook took to answer (`CreationHook`), and how often it could not be asked.
    let hookSeconds: CoreMetrics.Timer
    let hookFailures: CoreMetrics.Counter
    /// How long the review hook took to answer (`HookReviewer`).
    let reviewSeconds: CoreMetrics.Timer

    init() {
        registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
            .seconds(1), .milliseconds(2500), .seconds(5), .seconds(10),
        ]
        self.factory = factory
        bytesReceived = CoreMetrics.Counter(label: "photoprep_received_bytes_total", dimensions: [], factory: factory)
        uploadsInProgress = CoreMetrics.Meter(label: "photoprep_uploads_in_progress", dimensions: [], factory: factory)
        pipelineSeconds = CoreMetrics.Timer(label: "photoprep_pipeline_seconds", dimensions: [], factory: factory)
        photosStored = CoreMetrics.Counter(label: "photoprep_photos_stored_total", dimensions: [], factory: factory)
        hookSeconds = CoreMetrics.Timer(label: "photoprep_hook_seconds", dimensions: [], factory: factory)
        hookFailures = CoreMetrics.Counter(label: "photoprep_hook_failures_total", dimensions: [], factory: factory)
        reviewSeconds = CoreMetrics.Timer(label: "photoprep_review_seconds", dimensions: [], factory: factory)
    }

    /// One answered request, by method and status (each pair's counter made once: making one looks it up
    /// in the registry by name and labels, which costs more than counting).
    func request(method: String, status: Int) {
        let name = "\(method) \(status)"
        let counter = requests.withLock { counters in
            if let counter = counters[name] { return counter }
            let counter = CoreMetrics.Counter(label: "photoprep_requests_total", dimensions: [("method", method), ("status", String(status))], factory: factory)
            counters[name] = counter
            return counter
        }
        counter.increment()
    }
    private let requests = Mutex<[String: CoreMetrics.Counter]>([:])

    /// A request refused by a rule (`auth`, `path`, `size`, `type`, `photo`, …).
    func refusal(_ reason: String) {
        CoreMetrics.Counter(label: "photoprep_rule_refusals_total", dimensions: [("reason", reason)], factory: factory).increment()
    }

    /// A failure of the database or the storage (`DependencyFailure`), by condition (`unavailable`, `full`).
    func dependencyFailure(_ condition: String) {
        CoreMetrics.Counter(label: "photoprep_dependency_failures_total", dimensions: [("condition", condition)], factory: factory).increment()
    }

    /// A review hook's verdict (`accept`, `reject`, `quarantine`), or `failed` (nil) when it could not be asked.
    func review(_ verdict: ReviewVerdict?) {
        let name = switch verdict {
        case .accept: "accept"
        case .reject: "reject"
        case .quarantine: "quarantine"
        case .unavailable, nil: "failed"
        }
        CoreMetrics.Counter(label: "photoprep_review_verdicts_total", dimensions: [("verdict", name)], factory: factory).increment()
    }

    /// What the events' delivery saw: each attempt by its outcome (`photoprep_event_deliveries_total`: delivered,
    /// retry, dead), and how many events are in each state (`photoprep_events`: pending, delivered, dead).
    func events(_ observation: EventDeliveryService.Observation) {
        switch observation {
        case .attempt(let action):
            let outcome = switch action {
            case .delivered: "delivered"
            case .retry: "retry"
            case .dead: "dead"
            }
            CoreMetrics.Counter(label: "photoprep_event_deliveries_total", dimensions: [("outcome", outcome)], factory: factory).increment()
        case .counts(let counts):
            for (state, count) in counts {
                CoreMetrics.Gauge(label: "photoprep_events", dimensions: [("state", state.rawValue)], factory: factory).record(count)
            }
        }
    }

    /// The Prometheus text exposition.
    func exposition() -> String { registry.emitToString() }
}
