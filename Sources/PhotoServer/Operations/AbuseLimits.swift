import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Synchronization

/// The abuse limits on writes — upload creations (tus `POST /files`, the draft's `POST /uploads/…`) and the
/// API's writes (`POST`, `PUT`, `PATCH`, `DELETE` under `/v1/`) — per signed-in user and per client
/// address: 429 with `Retry-After` once a client's bucket is empty (`TokenBuckets`). The client address
/// is the connection's peer; when the peer is a trusted proxy (`--trust-proxy`), the last address in
/// `X-Forwarded-For` that is not one (so a client cannot name itself by sending the header).
struct AbuseLimits: RouterMiddleware {
    typealias Context = ServerContext
    let metrics: ServerMetrics
    let trustedProxies: [AddressRange]
    private let users: Buckets
    private let addresses: Buckets

    /// One `TokenBuckets` behind its lock.
    final class Buckets: Sendable {
        let buckets: Mutex<TokenBuckets>
        init(_ limit: RateLimit) { buckets = Mutex(TokenBuckets(limit)) }
        func take(_ client: String, now: ContinuousClock.Instant) -> TokenBuckets.Decision { buckets.withLock { $0.take(client, now: now) } }
    }

    init(perUser: RateLimit, perAddress: RateLimit, trustedProxies: [AddressRange], metrics: ServerMetrics) {
        users = Buckets(perUser)
        addresses = Buckets(perAddress)
        self.trustedProxies = trustedProxies
        self.metrics = metrics
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard Self.isWrite(request) else { return try await next(request, context) }
        let now = ContinuousClock.now
        if let address = clientAddress(request, peer: context.peer), case .refused(let seconds) = addresses.take(address, now: now) {
            return refusal("too many writes from \(address)", seconds)
        }
        if case .success(let caller) = context.identity, case .refused(let seconds) = users.take(caller.id, now: now) {
            return refusal("too many writes by \(caller.id)", seconds)
        }
        return try await next(request, context)
    }

    private func refusal(_ what: String, _ seconds: Int) -> Response {
        metrics.refusal("rate")
        var response = Problem(.tooManyRequests, "rate", "\(what); try again in \(seconds) s").response
        response.headers[.retryAfter] = String(seconds)
        return response
    }

    /// Upload creations and the API's writes; reads, offsets, appends and the page are not counted.
    static func isWrite(_ request: Request) -> Bool {
        let path = request.uri.path
        switch request.method {
        case .post:
            return path == "/files" || path == "/files/" || path.hasPrefix("/uploads/") || path.hasPrefix("/v1/")
        case .put, .patch, .delete:
            return path.hasPrefix("/v1/")
        default:
            return false
        }
    }

    /// Who is writing: the peer, or — while the address so far is a trusted proxy — the hop before it in
    /// `X-Forwarded-For`, read from the right.
    func clientAddress(_ request: Request, peer: String?) -> String? {
        guard var address = peer else { return nil }
        let hops = request.headers[values: Self.forwardedFor].flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }
        for hop in hops.reversed() {
            guard trustedProxies.contains(where: { $0.contains(address) }), AddressRange.bytes(hop) != nil else { break }
            address = hop
        }
        return address
    }

    static let forwardedFor = HTTPField.Name("X-Forwarded-For")!
}
