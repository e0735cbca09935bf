import Foundation
import Testing
import TestSupport

/// Nothing a stranger asks says whether a photo or a group exists: a download URL with a wrong token takes the same
/// path for a key that has a photo as for one that has none, and a group id someone else holds is refused as the
/// caller's own id sent with another creation.
@Suite struct ServeExistenceTests {
    /// The record cache keeps keys without a photo as it keeps photos, so a wrong token for an unknown key is not
    /// slower than one for a stored photo (a database read, against a lookup in memory: 246 µs against 169 µs was
    /// enough to tell 25 guessed keys of 25 apart). Shown without a clock: each URL asked once, the database then
    /// made to stop answering (its relay stopped), and both asked again at once — both are answered 404 from memory.
    /// Records are kept 600 s here (`--records-lifetime`), not 1 s, so that a busy machine's slow answers do not
    /// outlive them; a write in between still empties the cache, so this is tried up to five times.
    @Test func anUnknownKeyTakesTheWrongTokensPath() async throws {
        let (relay, server) = try await SeededServer.relayedPostgres(["--records-lifetime", "600"])
        defer { kill(relay.processIdentifier, SIGCONT); server.stop() }
        let token = TestTokens.hs256(sub: "u1", claims: ["name": "Ana"])
        try await ServeReadTests.upload(server, "photos/storm-1920x1280.jpg", to: "profile_images/u1/me.jpg", token: token)
        let url = try await ServeReadTests.downloadURL(server, "/v1/me/photo", token: token)
        let granted = try #require(url.split(separator: "token=").last.map(String.init), "\(url)")
        let wrong = url.replacingOccurrences(of: granted, with: String(repeating: "0", count: granted.count))
        let unknown = wrong.replacingOccurrences(of: "/media/profile_images/u1/me.jpg", with: "/media/profile_images/u1/not-there.jpg")
        try #require(unknown != wrong)
        #expect(try await HTTPExchange.send("GET", url).status == 200)

        var fromMemory: [String] = []
        for _ in 0..<5 where fromMemory.count < 2 {
            kill(relay.processIdentifier, SIGCONT)
            async let first = HTTPExchange.send("GET", wrong)
            async let second = HTTPExchange.send("GET", unknown)
            let asked = try await [first, second]
            #expect(asked.map(\.status) == [404, 404] && asked[0].body == asked[1].body, "\(asked)")
            kill(relay.processIdentifier, SIGSTOP)
            async let storedAgain = try? HTTPExchange.send("GET", wrong, timeout: .seconds(5))
            async let unknownAgain = try? HTTPExchange.send("GET", unknown, timeout: .seconds(5))
            let again = await [("the stored photo's key", storedAgain), ("a key without a photo", unknownAgain)]
            fromMemory = again.filter { $0.1?.status == 404 }.map(\.0)
        }
        #expect(fromMemory.count == 2, "answered without the database only for \(fromMemory)")
    }

    /// A group id another user's group has: refused exactly as the caller's own group id sent with another creation
    /// (409, the same words), not 403 — which an id nobody has is not, so it told the id was taken by someone else.
    /// On the router in-process: no socket is needed to tell the answers apart.
    @Test func someoneElsesGroupIdIsRefusedAsAnyTakenId() async throws {
        try await SeededRouter.run { seeded in
            let u1 = TestTokens.hs256(sub: "u1"), u2 = TestTokens.hs256(sub: "u2")
            let id = UUID().uuidString.lowercased()
            let mine: [String: Any] = ["id": id, "name": "Mine", "participants": ["u2", "u3"]]
            #expect(try await ServeAPITests.call(seeded.api, "POST", "/v1/groups", token: u1, json: mine).status == 201)

            let stolen = try await ServeAPITests.call(seeded.api, "POST", "/v1/groups", token: u2, json: ["id": id, "name": "Mine", "participants": ["u1", "u3"]])
            let own = try await ServeAPITests.call(seeded.api, "POST", "/v1/groups", token: u1, json: ["id": id, "name": "Other", "participants": ["u2", "u3"]])
            #expect(stolen.status == 409 && own.status == 409, "\(stolen.body) \(own.body)")
            #expect(stolen.body["type"] as? String == own.body["type"] as? String && stolen.body["detail"] as? String == own.body["detail"] as? String,
                    "\(stolen.body) \(own.body)")
            let database = try await seeded.database()
            #expect(try await database.count("chatGroup", where: "id", id) == 1)
        }
    }
}
