import Hummingbird
import NIOCore

/// What operators and load balancers probe: `/health/live` (the process answers requests: restart it when
/// this fails) and `/health/ready` (it can take photos now: send it uploads only while this is 200), with
/// `/health` the same as `/health/ready`. Neither waits for the database or the storage (`Readiness`).
///
/// ```
/// GET /health/ready  →  200 {"status":"ok","database":"ok","storage":"ok"}
///                       503 {"status":"unavailable","database":"ok","storage":"full"}, Retry-After: 5
/// ```
struct HealthRoutes: Sendable {
    let readiness: Readiness

    func register(on router: some RouterMethods<ServerContext>) {
        router.get("/health/live") { _, _ in Self.json(.ok, "{\"status\":\"ok\"}\n") }
        for path in ["/health", "/health/ready"] {
            router.get(RouterPath(path)) { [readiness] _, _ in
                let report = await readiness.report()
                return Self.json(report.ready ? .ok : .serviceUnavailable, report.json)
            }
        }
    }

    static func json(_ status: HTTPResponse.Status, _ body: String) -> Response {
        var headers: HTTPFields = [.contentType: "application/json", .cacheControl: "no-store"]
        if status == .serviceUnavailable, let seconds = Problem.retryAfter(.serviceUnavailable) { headers[.retryAfter] = "\(seconds)" }
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
    }
}
