import Foundation
import PhotoServer
import PhotoServices
import SQLKit
import Testing
import TestSupport

/// `/v1/events` on the server's router: its admins (`--admin`) list the outbox and send an event again; nobody else
/// sees it.
@Suite struct EventsAPITests {
    static func json(_ exchange: HTTPExchange) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(exchange.body.utf8)) as? [String: Any], "\(exchange)")
    }

    @Test func adminsListAndRetryEventsOthersAreRefused() async throws {
        try await SeededRouter.run(configure: { $0.admins = ["u1"] }) { server in
            let admin = ["Authorization": "Bearer \(TestTokens.hs256(sub: "u1"))"]
            let member = ["Authorization": "Bearer \(TestTokens.hs256(sub: "u2"))"]
            let refused = try await server.send("GET", "/v1/events", headers: member)
            #expect(refused.status == 403 && refused.body.contains("not-allowed"), "\(refused)")
            #expect(try await server.send("POST", "/v1/events/evt_x/retry", headers: member).status == 403)
            // The seeded group's creation, recorded with it; no delivery runs on the router.
            let listed = try Self.json(try await server.send("GET", "/v1/events", headers: admin))
            let events = try #require(listed["events"] as? [[String: Any]])
            #expect(events.count == 1, "\(listed)")
            let created = events[0]
            let id = try #require(created["id"] as? String)
            #expect(created["type"] as? String == "group.created" && created["state"] as? String == "pending" && created["subject"] as? String == "group:\(server.groupId)")
            #expect(((created["event"] as? [String: Any])?["data"] as? [String: Any])?["name"] as? String == "Hiking", "\(created)")
            #expect(try await server.send("POST", "/v1/events/\(id)/retry", headers: admin).status == 409, "pending already")
            #expect(try await server.send("POST", "/v1/events/evt_nosuch/retry", headers: admin).status == 404)
            #expect(try await server.send("GET", "/v1/events?state=lost", headers: admin).status == 400)
            // Dead (as the delivery leaves it after its last attempt): listed by state, then sent again.
            let database = try await server.database()
            try await database.write { db in
                try await db.update("event").set("state", to: "dead").set("attempts", to: 16).set("lastError", to: "the receiver answered 500")
                    .where("id", .equal, id).run()
            }
            await database.close()
            let dead = try Self.json(try await server.send("GET", "/v1/events?state=dead", headers: admin))
            #expect((dead["events"] as? [[String: Any]])?.map { $0["lastError"] as? String } == ["the receiver answered 500"], "\(dead)")
            #expect((try Self.json(try await server.send("GET", "/v1/events?state=pending", headers: admin))["events"] as? [Any])?.isEmpty == true)
            let retried = try Self.json(try await server.send("POST", "/v1/events/\(id)/retry", headers: admin))
            #expect(retried["state"] as? String == "pending" && retried["attempts"] as? Int == 0 && retried["nextAttemptAt"] is String, "\(retried)")
        }
    }
}
