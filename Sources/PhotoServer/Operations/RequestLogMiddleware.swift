import Foundation
import HTTPTypes
import Hummingbird
import Logging

/// One log line per request — method, path, status, body bytes received, duration, user — and the
/// request counter. Headers are never logged (they carry the token).
struct RequestLogMiddleware: RouterMiddleware {
    typealias Context = ServerContext
    let metrics: ServerMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        let entry = context.log
        do {
            let response = try await next(request, context)
            log(request, context, status: response.status.code, entry: entry, started: started)
            return response
        } catch {
            let status = (error as? any HTTPResponseError)?.status.code ?? 500
            log(request, context, status: status, entry: entry, started: started)
            throw error
        }
    }

    private func log(_ request: Request, _ context: Context, status: Int, entry: RequestLogEntry, started: ContinuousClock.Instant) {
        Self.record(
            method: request.method.rawValue, path: request.uri.path, status: status, bytes: entry.bytes, user: entry.user,
            started: started, logger: context.logger, metrics: metrics)
    }

    /// Counts a request and logs its line: the router's requests and those `MediaOnEventLoop` answers alike.
    static func record(
        method: String, path: String, status: Int, bytes: Int64, user: String?, started: ContinuousClock.Instant,
        logger: Logger, metrics: ServerMetrics
    ) {
        metrics.request(method: method, status: status)
        let elapsed = ContinuousClock.now - started
        let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        logger.info(
            "\(method) \(path) \(status)",
            metadata: ["bytes": "\(bytes)", "ms": "\(String(format: "%.1f", milliseconds))", "user": "\(user ?? "-")"])
    }
}
