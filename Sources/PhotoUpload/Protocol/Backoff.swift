/// Exponential backoff with jitter: the delay before retry `attempt` (1-based) is
/// `initial × 2^(attempt−1)`, capped at `maximum`, then scaled by a random factor in [0.5, 1].
///
/// | attempt | initial 200 ms, max 10 s (before jitter) |
/// |---|---|
/// | 1 | 200 ms |
/// | 2 | 400 ms |
/// | 3 | 800 ms |
/// | 6 | 6.4 s |
/// | 7 and later | 10 s |
struct Backoff {
    var initial: Duration
    var maximum: Duration

    func delay(attempt: Int, jitter: Double) -> Duration {
        let exponent = min(max(attempt - 1, 0), 30)
        let raw = initial * (1 << exponent)
        let capped = raw > maximum ? maximum : raw
        return capped * (0.5 + 0.5 * min(max(jitter, 0), 1))
    }
}

extension Duration {
    /// The duration in seconds, fractions included.
    var seconds: Double {
        let (whole, attoseconds) = components
        return Double(whole) + Double(attoseconds) / 1e18
    }
}
