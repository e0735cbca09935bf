import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Synchronization

/// The request context: Hummingbird's core storage, who is calling, and what the request log line needs
/// from the handler.
struct ServerContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let log = RequestLogEntry()
    /// Who is calling, as `BearerAuthentication` found it: the verified token's caller, or why there is none.
    var identity: Result<Caller, Authenticator.Failure> = .failure(.init(description: "no Authorization header"))
    /// The API's JSON: its rules for request bodies and its encoding of answers.
    var requestDecoder: APIRequestDecoder { APIRequestDecoder() }
    var responseEncoder: APIResponseEncoder { APIResponseEncoder() }

    /// The connection's peer address (nil when it has none, as in-process tests).
    let peer: String?

    init(source: Source) {
        coreContext = .init(source: source)
        peer = source.channel.remoteAddress?.ipAddress
    }
}

/// Filled in while a request is handled: who it was (once the token verified) and the body bytes received.
final class RequestLogEntry: Sendable {
    private let state = Mutex<(user: String?, bytes: Int64)>((nil, 0))

    func authenticated(_ user: String) { state.withLock { $0.user = user } }
    func received(_ count: Int) { state.withLock { $0.bytes += Int64(count) } }
    var user: String? { state.withLock { $0.user } }
    var bytes: Int64 { state.withLock { $0.bytes } }
}

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
