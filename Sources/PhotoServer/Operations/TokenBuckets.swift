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
