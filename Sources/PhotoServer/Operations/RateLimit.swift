/// How many writes one client may make: `perMinute` on average, and as many at once (the bucket holds a
/// minute's worth). 0: no limit.
public struct RateLimit: Sendable, Equatable, CustomStringConvertible {
    public var perMinute: Int

    public init(perMinute: Int) { self.perMinute = perMinute }

    public var description: String { perMinute == 0 ? "no limit" : "\(perMinute) a minute" }
}
