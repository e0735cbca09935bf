/// When a remote JWKS (an identity provider's signing keys at a URL) is fetched again — a pure state
/// machine like `UploadStateMachine`: events in, decisions out, no I/O, no clock of its own.
///
/// - Fetched once at start, then again when its `Cache-Control: max-age` runs out (kept between one
///   minute and a day; an hour without one), in the background.
/// - A token naming a key id the set does not have asks for a fetch at once (a rotation) — such fetches at
///   most once per `unknownKidInterval` whatever the traffic, so forged key ids cannot make the server
///   hammer the provider.
/// - A failed fetch keeps the last good keys and is tried again after `retryAfterFailure`.
struct KeySetRefresh: Sendable {
    static let unknownKidInterval = Duration.seconds(60)
    static let retryAfterFailure = Duration.seconds(60)
    static let defaultLifetime = Duration.seconds(3600)
    static let lifetimes = Duration.seconds(60)...Duration.seconds(86_400)

    typealias Instant = ContinuousClock.Instant

    /// A fetch is under way (others wait for it rather than start their own).
    private(set) var fetching = false
    /// When the keys are due to be fetched again.
    private(set) var due: Instant
    /// When a token's unknown key id last started a fetch.
    private var lastUnknownKeyFetch: Instant?

    init(now: Instant) {
        due = now
    }

    /// Time for the background fetch? (Then it is under way.)
    mutating func isDue(now: Instant) -> Bool {
        guard !fetching, now >= due else { return false }
        fetching = true
        return true
    }

    /// A token names a key id the set does not have: fetch now? (Then it is under way.) No when one is
    /// under way already, or one was started less than `unknownKidInterval` ago.
    mutating func unknownKeyID(now: Instant) -> Bool {
        guard !fetching else { return false }
        if let last = lastUnknownKeyFetch, now - last < Self.unknownKidInterval { return false }
        lastUnknownKeyFetch = now
        fetching = true
        return true
    }

    /// The fetch brought keys valid for `maxAge` (the answer's `Cache-Control`), if it said.
    mutating func fetched(now: Instant, maxAge: Duration?) {
        fetching = false
        let lifetime = maxAge ?? Self.defaultLifetime
        due = now + min(max(lifetime, Self.lifetimes.lowerBound), Self.lifetimes.upperBound)
    }

    /// The fetch failed: the keys stay as they were; try again later.
    mutating func failed(now: Instant) {
        fetching = false
        due = now + Self.retryAfterFailure
    }
}
