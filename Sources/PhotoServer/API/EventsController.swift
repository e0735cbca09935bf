import Foundation
import Hummingbird
import PhotoServices

/// `/v1/events…`: the events' outbox for the server's admins (`serve --admin`): list them — the dead ones above all —
/// and send one again. Anyone else gets 403.
struct EventsController: Sendable {
    let outbox: Outbox
    let admins: Admins

    func addRoutes(to v1: RouterGroup<ServerContext>) {
        v1.get("events", use: list)
        v1.post("events/:id/retry", use: retry)
    }

    /// The newest events (`?state=pending|delivered|dead`, `?limit=1…200`), newest first.
    @Sendable func list(_ request: Request, context: ServerContext) async throws -> EventPage {
        _ = try admins.require(context, "see the events")
        var state: OutboxEvent.State?
        if let text = request.uri.queryParameters.get("state") {
            guard let known = OutboxEvent.State(rawValue: String(text)) else {
                throw Problem(.badRequest, "state", "state must be pending, delivered or dead", field: "state")
            }
            state = known
        }
        return EventPage(events: try await outbox.events(in: state, limit: try Paging.limit(request)).map(EventBody.init))
    }

    /// Sends the event again from a first attempt (a dead one; a delivered one is replayed under its id): the event, pending.
    @Sendable func retry(_ request: Request, context: ServerContext) async throws -> EventBody {
        _ = try admins.require(context, "send events again")
        let id = context.parameter("id")
        if try await outbox.resend([id]).isEmpty {
            guard try await outbox.event(id) != nil else { throw ServiceError.notFound("event \(id)") }
            throw ServiceError.invalidState("event \(id) is pending already")
        }
        guard let event = try await outbox.event(id) else { throw ServiceError.notFound("event \(id)") }
        return EventBody(event)
    }
}
