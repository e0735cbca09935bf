public import Foundation
public import Logging
import PhotoFiles
public import ServiceLifecycle

/// Delivers the outbox's events to the app's receiver, as a swift-service-lifecycle `Service`: each is POSTed as
/// JSON, signed as Standard Webhooks do (`webhook-id`, `webhook-timestamp`, `webhook-signature`); up to `batch` at
/// once, each the oldest undelivered of its subject, so one at a time and in order per subject, taken and settled in
/// one transaction each; what becomes of an attempt is `EventDelivery`'s decision. Every instance sharing a database runs
/// one, and each event is taken by one of them (`Outbox.claimNext`). It looks at the outbox every `interval` when it
/// has nothing to send, and deletes events older than `keep` (pending ones too when there is no receiver). At least
/// once: an instance that dies after the receiver answered but before recording it leaves the event to be sent again
/// when its lease ends — receivers tell repeats by `webhook-id`.
public struct EventDeliveryService: Service {
    /// Where events go and how they are signed.
    public struct Receiver: Sendable {
        public var url: String
        public var signer: WebhookSigner
        /// How long one attempt may take, answer and body included.
        public var timeout: Duration

        public init(url: String, signer: WebhookSigner, timeout: Duration = .seconds(10)) {
            (self.url, self.signer, self.timeout) = (url, signer, timeout)
        }
    }

    /// What the service saw, for metrics.
    public enum Observation: Sendable {
        case attempt(EventDelivery.Action)
        case counts([OutboxEvent.State: Int])
    }

    let outbox: Outbox
    let receiver: Receiver?
    let policy: EventDelivery
    let lease: Duration
    let interval: Duration
    let keep: Duration
    /// Events sent at once (of as many subjects).
    let batch = 16
    let logger: Logger
    let observe: @Sendable (Observation) -> Void

    public init(
        outbox: Outbox, receiver: Receiver?, policy: EventDelivery = EventDelivery(), lease: Duration = .seconds(30), interval: Duration = .milliseconds(250),
        keep: Duration = .seconds(7 * 24 * 3600), logger: Logger, observe: @escaping @Sendable (Observation) -> Void = { _ in }
    ) {
        (self.outbox, self.receiver, self.policy, self.lease, self.interval, self.keep) = (outbox, receiver, policy, lease, interval, keep)
        (self.logger, self.observe) = (logger, observe)
    }

    public func run() async throws {
        let runner = randomHex(byteCount: 8)
        let clock = ContinuousClock()
        var pruned: ContinuousClock.Instant?
        var counted: ContinuousClock.Instant?
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
            do {
                if pruned.map({ clock.now - $0 > .seconds(600) }) ?? true {
                    let gone = try await outbox.prune(recordedBefore: Date() - keep.timeInterval, undelivered: receiver == nil)
                    if gone > 0 { logger.info("events: deleted \(gone) recorded more than \(keep) ago") }
                    pruned = clock.now
                }
                if let receiver {
                    while !Task.isShuttingDownGracefully {
                        let events = try await outbox.claimDue(runner: runner, lease: lease, limit: batch)
                        guard !events.isEmpty else { break }
                        let attempts = await withTaskGroup(of: (event: OutboxEvent, action: EventDelivery.Action).self) { group in
                            for event in events { group.addTask { (event, await deliver(event, to: receiver)) } }
                            return await group.reduce(into: []) { $0.append($1) }
                        }
                        try await outbox.settle(attempts, runner: runner)
                        for (event, action) in attempts {
                            observe(.attempt(action))
                            switch action {
                            case .delivered: break
                            case .retry(let at, let error):
                                logger.warning("event \(event.id) (\(event.type)) not delivered, attempt \(event.attempts): \(error); again at \(at)")
                            case .dead(let error):
                                logger.error("event \(event.id) (\(event.type)) is dead: \(error); `photoprep events retry \(event.id)` sends it again")
                            }
                        }
                    }
                }
                if counted.map({ clock.now - $0 > .seconds(5) }) ?? true {
                    observe(.counts(try await outbox.counts()))
                    counted = clock.now
                }
            } catch {
                logger.warning("events: \(error); trying again in \(interval)")
            }
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
        }
    }

    /// One attempt: the outcome, decided on.
    func deliver(_ event: OutboxEvent, to receiver: Receiver) async -> EventDelivery.Action {
        let outcome = await Self.send(event, to: receiver)
        return policy.next(after: outcome, attempts: event.attempts, at: Date(), jitter: Double.random(in: 0..<1))
    }

    /// POSTs `event` to the receiver, bounded by its timeout whatever the receiver does.
    static func send(_ event: OutboxEvent, to receiver: Receiver) async -> EventDelivery.Outcome {
        let body = Data(event.body.utf8)
        let timestamp = Int(Date().timeIntervalSince1970)
        let signature = receiver.signer.signature(id: event.id, timestamp: timestamp, body: body)
        let headers = [("webhook-id", event.id), ("webhook-timestamp", String(timestamp)), ("webhook-signature", signature)]
        switch await BoundedPost.send(to: receiver.url, body: body, headers: headers, timeout: receiver.timeout) {
        case .answered(let status, _): return .answered(status)
        case .failed(let why): return .failed(why)
        }
    }
}
