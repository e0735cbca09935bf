public import Foundation

/// An event in the outbox (`event` table): written in the transaction of the change it tells of, sent to the app's
/// receiver by `EventDeliveryService` until it answers 2xx (`delivered`) or the attempts run out (`dead`).
public struct OutboxEvent: Codable, Sendable, Equatable {
    public enum State: String, Codable, Sendable, CaseIterable {
        case pending, delivered, dead
    }

    /// The order events were recorded in: events of one subject are sent in it.
    public var seq: Int64?
    /// `webhook-id`: the same on every attempt, so that a receiver can tell an event it already has.
    public var id: String
    public var type: String
    /// Whose events are sent in order, one at a time: `user:{id}` or `group:{id}`.
    public var subject: String
    /// The JSON sent: `{"type", "timestamp", "data"}`, fixed when recorded.
    public var body: String
    public var state: State
    public var attempts: Int
    /// Not sent before this (the backoff after a failed attempt).
    public var nextAttemptAt: Date
    public var lastError: String?
    /// The delivering instance holding it (`EventDeliveryService`'s random id), until when.
    public var leaseOwner: String?
    public var leaseExpiresAt: Date?
    public var createdAt: Date
    public var deliveredAt: Date?
}
