public import Foundation

/// What becomes of an event after an attempt to deliver it: a pure decision, from the attempt's outcome, the attempts
/// made and the policy. The receiver answering 2xx delivered it; anything else — another status, no answer within the
/// timeout, no connection — is tried again after a delay that doubles each time (`firstDelay`, 2×, 4×, … at most
/// `maxDelay`, each stretched by up to a fifth at random so that instances do not retry in step), until
/// `maxAttempts` attempts failed: then it is dead, kept for `photoprep events retry`.
public struct EventDelivery: Sendable, Equatable {
    public var maxAttempts: Int
    public var firstDelay: Duration
    public var maxDelay: Duration

    /// 16 attempts over about 4 hours: after 1 s, 2 s, 4 s, … 34 min, then each hour.
    public init(maxAttempts: Int = 16, firstDelay: Duration = .seconds(1), maxDelay: Duration = .seconds(3600)) {
        self.maxAttempts = max(maxAttempts, 1)
        self.firstDelay = firstDelay
        self.maxDelay = max(maxDelay, firstDelay)
    }

    /// How an attempt went.
    public enum Outcome: Sendable, Equatable {
        /// The receiver answered with this status.
        case answered(Int)
        /// No answer: why.
        case failed(String)
    }

    /// What to record.
    public enum Action: Sendable, Equatable {
        case delivered
        case retry(at: Date, error: String)
        case dead(error: String)
    }

    /// After the attempt numbered `attempts` (1 for the first) ended with `outcome` at `now`; `jitter` in 0..<1.
    public func next(after outcome: Outcome, attempts: Int, at now: Date, jitter: Double = 0) -> Action {
        let error: String
        switch outcome {
        case .answered(let status) where (200..<300).contains(status): return .delivered
        case .answered(let status): error = "the receiver answered \(status)"
        case .failed(let why): error = why
        }
        guard attempts < maxAttempts else { return .dead(error: "\(error) (attempt \(attempts) of \(maxAttempts))") }
        return .retry(at: now + delay(after: attempts).timeInterval * (1 + 0.2 * min(max(jitter, 0), 1)), error: error)
    }

    /// The wait after the attempt numbered `attempts` failed.
    public func delay(after attempts: Int) -> Duration {
        var delay = firstDelay
        for _ in 1..<max(attempts, 1) {
            delay *= 2
            if delay >= maxDelay { return maxDelay }
        }
        return min(delay, maxDelay)
    }
}
