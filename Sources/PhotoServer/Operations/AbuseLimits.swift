import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Synchronization

/// How many writes one client may make: `perMinute` on average, and as many at once (the bucket holds a
/// minute's worth). 0: no limit.
public struct RateLimit: Sendable, Equatable, CustomStringConvertible {
    public var perMinute: Int

    public init(perMinute: Int) { self.perMinute = perMinute }

    public var description: String { perMinute == 0 ? "no limit" : "\(perMinute) a minute" }
}

/// Token buckets, one per client, as a pure state machine: no clock and no lock of its own — the owner
/// says when, and keeps it behind a lock. Each bucket holds up to `limit.perMinute` tokens, refills at
/// that many a minute, and a write takes one; a client whose bucket is empty is told how long until it
/// holds one again. Buckets that have refilled completely are forgotten when there are many (a full
/// bucket is what a new client gets anyway), so scanning from many addresses cannot grow it without bound.
struct TokenBuckets {
    enum Decision: Equatable {
        case allowed
        /// Refused: a token is back after this many seconds (at least 1, as `Retry-After` counts).
        case refused(retryAfter: Int)
    }

    let limit: RateLimit
    /// Above this many buckets, full ones are dropped.
    let tidyAbove: Int
    private var buckets: [String: (tokens: Double, at: ContinuousClock.Instant)] = [:]

    init(_ limit: RateLimit, tidyAbove: Int = 10_000) {
        self.limit = limit
        self.tidyAbove = tidyAbove
    }

    var count: Int { buckets.count }

    mutating func take(_ client: String, now: ContinuousClock.Instant) -> Decision {
        guard limit.perMinute > 0 else { return .allowed }
        let capacity = Double(limit.perMinute)
        var tokens = level(buckets[client], now: now)
        guard tokens >= 1 else {
            buckets[client] = (tokens, now)
            return .refused(retryAfter: max(1, Int(((1 - tokens) * 60 / capacity).rounded(.up))))
        }
        tokens -= 1
        if buckets.count >= tidyAbove, buckets[client] == nil {
            buckets = buckets.filter { level($0.value, now: now) < capacity }
        }
        buckets[client] = (tokens, now)
        return .allowed
    }

    /// The tokens in a bucket at `now` (a client never seen has a full one).
    private func level(_ bucket: (tokens: Double, at: ContinuousClock.Instant)?, now: ContinuousClock.Instant) -> Double {
        let capacity = Double(limit.perMinute)
        guard let bucket else { return capacity }
        let elapsed = now - bucket.at
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return min(capacity, bucket.tokens + seconds * capacity / 60)
    }
}

/// An address range in CIDR notation (`10.0.0.0/8`, `::1/128`, or one address): the proxies whose
/// `X-Forwarded-For` is believed.
public struct AddressRange: Sendable, Equatable, CustomStringConvertible {
    let network: [UInt8]
    let prefix: Int
    public let description: String

    public init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1).map(String.init)
        guard let first = parts.first, let address = Self.bytes(first) else { return nil }
        let bits = address.count * 8
        guard let prefix = parts.count == 2 ? Int(parts[1]) : bits, (0...bits).contains(prefix) else { return nil }
        network = address
        self.prefix = prefix
        description = text
    }

    /// Does the range hold `address` (an IPv4 or IPv6 address in text; IPv4-mapped IPv6 counts as IPv4)?
    public func contains(_ address: String) -> Bool {
        guard var bytes = Self.bytes(address) else { return false }
        if bytes.count == 16, network.count == 4, bytes[0..<12].elementsEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff]) {
            bytes = Array(bytes[12...])
        }
        guard bytes.count == network.count else { return false }
        for bit in 0..<prefix where (bytes[bit / 8] ^ network[bit / 8]) & (0x80 >> UInt8(bit % 8)) != 0 { return false }
        return true
    }

    /// An address's bytes: 4 for IPv4, 16 for IPv6 (`inet_pton`).
    static func bytes(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }
}

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
