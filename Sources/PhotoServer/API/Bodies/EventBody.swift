import Foundation
import Hummingbird
import PhotoServices

/// An event in the outbox, as `/v1/events` shows it: what was sent (`event`, the JSON body) and what became of it.
struct EventBody: ResponseEncodable {
    var id: String
    var type: String
    var subject: String
    var state: String
    var attempts: Int
    var recordedAt: Date
    var deliveredAt: Date?
    var nextAttemptAt: Date?
    var lastError: String?
    var event: JSONValue

    init(_ event: OutboxEvent) {
        id = event.id
        type = event.type
        subject = event.subject
        state = event.state.rawValue
        attempts = event.attempts
        recordedAt = event.createdAt
        deliveredAt = event.deliveredAt
        nextAttemptAt = event.state == .pending ? event.nextAttemptAt : nil
        lastError = event.lastError
        self.event = (try? JSONDecoder().decode(JSONValue.self, from: Data(event.body.utf8))) ?? .string(event.body)
    }
}
