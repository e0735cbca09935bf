import Foundation
import SQLKit
import PhotoServices
import Testing
import TestSupport

/// The services over HTTP (`/v1/`) on the built server: the rules at their boundaries, who may read
/// what, idempotent creation, pagination, the photo's state — and schemathesis against `/openapi.yaml`.
@Suite struct ServeAPITests {
    static func call(
        _ server: any HTTPCalls, _ method: String, _ path: String, token: String?, json: Any? = nil, headers: [String: String] = [:]
    ) async throws -> (status: Int, body: [String: Any], exchange: HTTPExchange) {
        var all = headers
        if let token { all["Authorization"] = "Bearer \(token)" }
        var body: [UInt8]?
        if let json {
            all["Content-Type"] = "application/json"
            body = Array(try JSONSerialization.data(withJSONObject: json))
        }
        let exchange = try await server.send(method, path, headers: all, body: body)
        let parsed = (try? JSONSerialization.jsonObject(with: Data(exchange.body.utf8)) as? [String: Any]) ?? [:]
        return (exchange.status, parsed, exchange)
    }

    /// Adds users u4…u`count` straight into the server's database.
    static func addUsers(_ seeded: some Seeded, upTo count: Int) async throws {
        let users = (4...count).map { User(id: "u\($0)", displayName: "User \($0)") }
        try await seeded.database().write { db in try await db.insert(into: "user").models(users).run() }
    }

    static func addUsers(_ seeded: some Seeded, _ users: [(String, String)]) async throws {
        let users = users.map { User(id: $0.0, displayName: $0.1) }
        try await seeded.database().write { db in try await db.insert(into: "user").models(users).run() }
    }

    /// A method a path does not have is 405 naming the ones it has (`Allow`), `OPTIONS` 204 with them, and
    /// `HEAD` works wherever `GET` does; a path that does not exist stays 404.
    @Test func methodsAPathDoesNotHaveAre405WithAllow() async throws {
        try await SeededRouter.run { seeded in
            let g = seeded.groupId
            let cases: [(String, String, Int, String?)] = [
                ("DELETE", "/health", 405, "GET, HEAD, OPTIONS"),
                ("PUT", "/files/abc", 405, "HEAD, PATCH, DELETE, OPTIONS"),
                ("GET", "/files", 405, "POST, OPTIONS"),
                ("POST", "/media/group_photos/\(g)/photo.jpg", 405, "GET, HEAD, OPTIONS"),
                ("DELETE", "/v1/groups", 405, "GET, HEAD, POST, OPTIONS"),
                ("PUT", "/v1/groups/\(g)", 405, "GET, HEAD, PATCH, OPTIONS"),
                ("OPTIONS", "/v1/me", 204, "GET, HEAD, PATCH, OPTIONS"),
                ("GET", "/no/such/path", 404, nil),
            ]
            for (method, path, status, allow) in cases {
                let answer = try await seeded.api.send(method, path, headers: [:], body: nil)
                #expect(answer.status == status, "\(method) \(path): \(answer.status) \(answer.body)")
                #expect(answer.header("Allow") == allow, "\(method) \(path)")
                if status == 405 { #expect(answer.body.contains("is not a method of this resource")) }
            }
            for path in ["/health", "/openapi.yaml", "/"] {
                let head = try await seeded.api.send("HEAD", path, headers: [:], body: nil)
                #expect(head.status == 200 && head.body.isEmpty, "HEAD \(path): \(head.status)")
            }
        }
    }

    @Test func everyOperationNeedsAToken() async throws {
        try await SeededRouter.run { seeded in
            let g = seeded.groupId
            let operations = [("GET", "/v1/me"), ("PATCH", "/v1/me"), ("GET", "/v1/me/photo"), ("DELETE", "/v1/me/photo"),
                              ("GET", "/v1/albums/trip/photos"), ("DELETE", "/v1/albums/trip/photos/x"), ("POST", "/v1/groups/\(seeded.groupId)/members"), ("GET", "/v1/users?prefix=A"), ("GET", "/v1/users/u2"), ("GET", "/v1/notifications"),
                              ("GET", "/v1/groups"), ("POST", "/v1/groups"), ("GET", "/v1/groups/\(g)"), ("PATCH", "/v1/groups/\(g)"),
                              ("GET", "/v1/groups/\(g)/messages"), ("GET", "/v1/groups/\(g)/photo")]
            for (method, path) in operations {
                for token in [nil, TestTokens.hs256(sub: "u1", secret: "a-different-secret-of-32-bytes-or-more")] {
                    let (status, body, exchange) = try await Self.call(seeded.api, method, path, token: token, json: method == "GET" ? nil : ["name": "x", "displayName": "x", "participants": ["u2", "u3"]])
                    #expect(status == 401, "\(method) \(path)")
                    #expect(exchange.header("Content-Type") == "application/problem+json" && body["status"] as? Int == 401)
                }
            }
            #expect(try await seeded.database().count("chatGroup") == 1)
            #expect(try await seeded.database().one(User.self, from: "user", id: "u1")?.displayName == "Ana")
    
        }
    }

    @Test func usersProfilesAndThePicker() async throws {
        try await SeededRouter.run { seeded in
            try await Self.addUsers(seeded, [("u4", "anabel"), ("u5", "Andrés"), ("u6", "Bob"), ("u7", "An%y")])
            let u1 = TestTokens.hs256(sub: "u1")
            #expect(try await Self.call(seeded.api, "GET", "/v1/me", token: u1).body["displayName"] as? String == "Ana")
            let renamed = try await Self.call(seeded.api, "PATCH", "/v1/me", token: u1, json: ["displayName": "  Ana María\u{202E} "])
            #expect(renamed.status == 200 && renamed.body["displayName"] as? String == "Ana María")
            let blank = try await Self.call(seeded.api, "PATCH", "/v1/me", token: u1, json: ["displayName": " \n "])
            #expect(blank.status == 422 && blank.body["field"] as? String == "displayName")
            // The picker: by prefix, ignoring case, never the caller ("Ana María"), by name; % is a character, not a wildcard.
            func names(_ query: String) async throws -> [String] {
                let page = try await Self.call(seeded.api, "GET", "/v1/users?\(query)", token: u1)
                return (page.body["users"] as? [[String: Any]] ?? []).compactMap { $0["displayName"] as? String }
            }
            #expect(try await names("prefix=an") == ["An%y", "anabel", "Andrés"])
            #expect(try await names("prefix=An%25") == ["An%y"])
            #expect(try await names("prefix=zz").isEmpty)
            let first = try await Self.call(seeded.api, "GET", "/v1/users?prefix=an&limit=2", token: u1)
            let cursor = try #require(first.body["nextCursor"] as? String)
            #expect(try await names("prefix=an&limit=2&cursor=\(cursor)") == ["Andrés"])
            #expect(try await names("prefix=an&cursor=") == ["An%y", "anabel", "Andrés"], "an empty cursor is the first page")
            #expect(try await Self.call(seeded.api, "GET", "/v1/users?cursor=nobody", token: u1).status == 400)
            #expect(try await Self.call(seeded.api, "GET", "/v1/users/u6", token: u1).body["displayName"] as? String == "Bob")
            #expect(try await Self.call(seeded.api, "GET", "/v1/users/nobody", token: u1).status == 404)
    
        }
    }

    @Test func renameMessagesAndNotifications() async throws {
        try await SeededRouter.run { seeded in
            try await Self.addUsers(seeded, upTo: 4)
            let g = seeded.groupId
            let (u1, u2, u4) = (TestTokens.hs256(sub: "u1"), TestTokens.hs256(sub: "u2"), TestTokens.hs256(sub: "u4"))
            // Rename: the admin may; a member may not (403); anyone else does not see the group (404).
            let renamed = try await Self.call(seeded.api, "PATCH", "/v1/groups/\(g)", token: u1, json: ["name": " Summit "])
            #expect(renamed.status == 200 && renamed.body["name"] as? String == "Summit")
            #expect(try await Self.call(seeded.api, "PATCH", "/v1/groups/\(g)", token: u2, json: ["name": "Mine"]).status == 403)
            #expect(try await Self.call(seeded.api, "PATCH", "/v1/groups/\(g)", token: u4, json: ["name": "Mine"]).status == 404)
            #expect(try await Self.call(seeded.api, "PATCH", "/v1/groups/\(g)", token: u1, json: ["name": String(repeating: "x", count: 51)]).status == 422)
            // Messages: the system message, to members only.
            let messages = try await Self.call(seeded.api, "GET", "/v1/groups/\(g)/messages", token: u2)
            let list = messages.body["messages"] as? [[String: Any]] ?? []
            #expect(list.count == 1 && list.first?["text"] as? String == "Ana created the group" && list.first?["sender"] as? String == "system")
            let after = try #require(list.first?["id"] as? Int)
            #expect((try await Self.call(seeded.api, "GET", "/v1/groups/\(g)/messages?after=\(after)", token: u2).body["messages"] as? [Any])?.isEmpty == true)
            #expect(try await Self.call(seeded.api, "GET", "/v1/groups/\(g)/messages", token: u4).status == 404)
            // Notifications: one for each other participant, opening the group; none for the creator.
            let notes = try await Self.call(seeded.api, "GET", "/v1/notifications", token: u2).body["notifications"] as? [[String: Any]] ?? []
            #expect(notes.count == 1 && notes.first?["deepLink"] as? String == "photoprep://groups/\(g)")
            #expect((try await Self.call(seeded.api, "GET", "/v1/notifications", token: u1).body["notifications"] as? [Any])?.isEmpty == true)
    
        }
    }

    @Test func groupRulesAtTheirBoundaries() async throws {
        try await SeededRouter.run { seeded in
            try await Self.addUsers(seeded, upTo: 258)
            let u1 = TestTokens.hs256(sub: "u1")
            func create(_ name: String, _ participants: [String]) async throws -> (Int, [String: Any]) {
                let (status, body, _) = try await Self.call(seeded.api, "POST", "/v1/groups", token: u1, json: ["name": name, "participants": participants])
                return (status, body)
            }
            let fifty = String(repeating: "é", count: 50)
            // Names: 1 and 50 characters (after trimming) are fine; 51, empty and blank are not.
            #expect(try await create("A", ["u2", "u3"]).0 == 201)
            let (status50, body50) = try await create("  \(fifty)\n", ["u2", "u3"])
            #expect(status50 == 201 && body50["name"] as? String == fifty)
            for bad in [fifty + "x", "", "   ", "\u{202E}"] {
                let (status, body) = try await create(bad, ["u2", "u3"])
                #expect(status == 422 && body["field"] as? String == "name", "\(bad.debugDescription): \(body)")
            }
            // Participants: 2 others are enough, 1 is not (duplicates and the creator do not count).
            let (tooFew, tooFewBody) = try await create("g", ["u2", "u2", "u1"])
            #expect(tooFew == 422 && tooFewBody["field"] as? String == "participants" && (tooFewBody["type"] as? String)?.hasSuffix("too-few-participants") == true)
            let (deduplicated, dedupBody) = try await create("g", ["u2", "u3", "u2", "u1"])
            #expect(deduplicated == 201 && (dedupBody["members"] as? [Any])?.count == 3)
            // 256 members with the creator; 257 is one too many.
            let (full, fullBody) = try await create("big", (2...256).map { "u\($0)" })
            #expect(full == 201 && (fullBody["members"] as? [Any])?.count == 256)
            let (over, overBody) = try await create("bigger", (2...257).map { "u\($0)" })
            #expect(over == 422 && (overBody["type"] as? String)?.hasSuffix("too-many-members") == true)
            // Unknown users, and ids that are not ids.
            let (unknown, unknownBody) = try await create("g", ["u2", "nobody"])
            #expect(unknown == 422 && unknownBody["field"] as? String == "participants" && (unknownBody["detail"] as? String)?.contains("nobody") == true)
            #expect(try await create("g", ["u2", "../u3"]).0 == 422)
            // Every created group has its system message and a notification per other participant.
            let database = try await seeded.database()
            let created = try await Self.call(seeded.api, "POST", "/v1/groups", token: u1, json: ["name": "Trip", "participants": ["u2", "u3"]])
            let id = try #require(created.body["id"] as? String)
            let messages = try await database.all(Message.self, from: "message", where: "groupId", id)
            #expect(messages.map(\.text) == ["Ana created the group"] && messages.first?.sender == "system")
            #expect(try await database.all(Notification.self, from: "notification", where: "groupId", id).map(\.userId).sorted() == ["u2", "u3"])
    
        }
    }

    @Test func onlyMembersSeeAGroupAndItsPhoto() async throws {
        try await SeededRouter.run { seeded in
            try await Self.addUsers(seeded, upTo: 5)
            for (user, expected) in [("u1", 200), ("u2", 200), ("u3", 200), ("u4", 404)] {
                let token = TestTokens.hs256(sub: user)
                #expect(try await Self.call(seeded.api, "GET", "/v1/groups/\(seeded.groupId)", token: token).status == expected, "\(user)")
                #expect(try await Self.call(seeded.api, "GET", "/v1/groups/\(seeded.groupId)/photo", token: token).status == expected, "\(user)")
            }
            #expect(try await Self.call(seeded.api, "GET", "/v1/groups/no-such-group", token: TestTokens.hs256(sub: "u1")).status == 404)
            let list = try await Self.call(seeded.api, "GET", "/v1/groups", token: TestTokens.hs256(sub: "u4"))
            #expect(list.status == 200 && (list.body["groups"] as? [Any])?.isEmpty == true)
    
        }
    }

    @Test func creationIsIdempotent() async throws {
        try await SeededRouter.run { seeded in
            let u1 = TestTokens.hs256(sub: "u1"), u2 = TestTokens.hs256(sub: "u2")
            let body: [String: Any] = ["name": "Once", "participants": ["u2", "u3"]]
            let first = try await Self.call(seeded.api, "POST", "/v1/groups", token: u1, json: body, headers: ["Idempotency-Key": "create-1"])
            let again = try await Self.call(seeded.api, "POST", "/v1/groups", token: u1, json: body, headers: ["Idempotency-Key": "create-1"])
            #expect(first.status == 201 && again.status == 201 && first.exchange.body == again.exchange.body)
            // The same creation with its participants in another order (and the creator among them) is the same creation;
            // another name or other participants under the same key is another creation: 409, not the first group.
            let reordered: [String: Any] = ["name": "Once", "participants": ["u3", "u1", "u2", "u3"]]
            let same = try await Self.call(seeded.api, "POST", "/v1/groups", token: u1, json: reordered, headers: ["Idempotency-Key": "create-1"])
            #expect(same.status == 201 && same.body["id"] as? String == first.body["id"] as? String)
            for changed in [["name": "Other", "participants": ["u2", "u3"]], ["name": "Once", "participants": ["u2", "u5"]]] as [[String: Any]] {
                let conflict = try await Self.call(seeded.api, "POST", "/v1/groups", token: u1, json: changed, headers: ["Idempotency-Key": "create-1"])
                #expect(conflict.status == 409, "\(changed): \(conflict.status) \(conflict.body)")
            }
            // A group renamed since: the creation sent again (its answer lost) still gets it.
            let firstId = try #require(first.body["id"] as? String)
            #expect(try await Self.call(seeded.api, "PATCH", "/v1/groups/\(firstId)", token: u1, json: ["name": "Renamed"]).status == 200)
            #expect(try await Self.call(seeded.api, "POST", "/v1/groups", token: u1, json: body, headers: ["Idempotency-Key": "create-1"]).status == 201)
            // The same key from another user is another group.
            let other = try await Self.call(seeded.api, "POST", "/v1/groups", token: u2, json: ["name": "Once", "participants": ["u1", "u3"]],
                                            headers: ["Idempotency-Key": "create-1"])
            #expect(other.status == 201 && other.body["id"] as? String != first.body["id"] as? String)
            // A client id: sent twice, one group; someone else's id: refused exactly as the caller's own id sent
            // with another creation, so the answer does not say whose group it is.
            let id = UUID().uuidString
            var withId = body
            withId["id"] = id
            #expect(try await Self.call(seeded.api, "POST", "/v1/groups", token: u1, json: withId).status == 201)
            let repeated = try await Self.call(seeded.api, "POST", "/v1/groups", token: u1, json: withId)
            #expect(repeated.status == 201 && repeated.body["id"] as? String == id.lowercased())
            let stolen: [String: Any] = ["name": "Once", "participants": ["u1", "u3"], "id": id]
            let refused = try await Self.call(seeded.api, "POST", "/v1/groups", token: u2, json: stolen)
            var another = withId
            another["name"] = "Another"
            let own = try await Self.call(seeded.api, "POST", "/v1/groups", token: u1, json: another)
            #expect(refused.status == 409 && own.status == 409, "\(refused.body) \(own.body)")
            #expect(refused.body["type"] as? String == own.body["type"] as? String && refused.body["detail"] as? String == own.body["detail"] as? String)
            #expect((refused.body["detail"] as? String)?.contains("u1") == false)
            let database = try await seeded.database()
            #expect(try await database.count("chatGroup", where: "name", "Once") == 2)
            #expect(try await database.count("message", where: "groupId", id.lowercased()) == 1)
    
        }
    }

    @Test func theCallersGroupsPageByPage() async throws {
        try await SeededRouter.run { seeded in
            let u2 = TestTokens.hs256(sub: "u2")
            var created = [seeded.groupId]
            for i in 0..<4 {
                let response = try await Self.call(seeded.api, "POST", "/v1/groups", token: u2, json: ["name": "g\(i)", "participants": ["u1", "u3"]])
                created.append(try #require(response.body["id"] as? String))
                try await Task.sleep(for: .milliseconds(5))
            }
            var seen: [String] = []
            var cursor: String?
            repeat {
                let query = "/v1/groups?limit=2" + (cursor.map { "&cursor=\($0)" } ?? "")
                let page = try await Self.call(seeded.api, "GET", query, token: u2)
                #expect(page.status == 200)
                let ids = (page.body["groups"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
                #expect(ids.count <= 2)
                seen += ids
                cursor = page.body["nextCursor"] as? String
            } while cursor != nil && seen.count < 10
            #expect(seen == created.reversed(), "newest activity first, each once")
            #expect(try await Self.call(seeded.api, "GET", "/v1/groups?cursor=bogus", token: u2).status == 400)
            let emptyCursor = try await Self.call(seeded.api, "GET", "/v1/groups?limit=2&cursor=", token: u2)
            #expect((emptyCursor.body["groups"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String } == Array(created.reversed().prefix(2)))
            #expect(try await Self.call(seeded.api, "GET", "/v1/groups?limit=0", token: u2).status == 400)
    
        }
    }

    @Test func thePhotoStateFollowsTheUpload() async throws {
        try await SeededRouter.run { seeded in
            let u1 = TestTokens.hs256(sub: "u1")
            let path = "/v1/groups/\(seeded.groupId)/photo"
            #expect(try await Self.call(seeded.api, "GET", path, token: u1).body["state"] as? String == "none")
            let jpeg = try Fixture.bytes("photos/storm-1920x1280.jpg")
            let location = try #require(try await ServeRulesTests.create(
                seeded, key: "group_photos/\(seeded.groupId)/photo.jpg", length: jpeg.count, token: u1).header("Location"))
            #expect(try await ServeRulesTests.patch(seeded, location, offset: 0, body: Array(jpeg.prefix(300_000)), token: u1).status == 204)
            let uploading = try await Self.call(seeded.api, "GET", path, token: TestTokens.hs256(sub: "u2")).body
            #expect(uploading["state"] as? String == "uploading" && uploading["acknowledgedBytes"] as? Int == 300_000 && uploading["totalBytes"] as? Int == jpeg.count)
            #expect(try await ServeRulesTests.patch(seeded, location, offset: 300_000, body: Array(jpeg[300_000...]), token: u1).status == 204)
            let ready = try await Self.call(seeded.api, "GET", path, token: u1).body
            #expect(ready["state"] as? String == "ready" && (ready["url"] as? String).map { SeededRouter.path(of: $0) }?.hasPrefix("/media/group_photos/\(seeded.groupId)/photo.jpg?") == true)
        }
    }

    @Test func membersChangeUnderTheRules() async throws {
        try await SeededRouter.run { seeded in
            try await Self.addUsers(seeded, upTo: 260)
            let g = seeded.groupId
            let (u1, u2, u9) = (TestTokens.hs256(sub: "u1"), TestTokens.hs256(sub: "u2"), TestTokens.hs256(sub: "u9"))
            func change(_ token: String, add: [String] = [], remove: [String] = []) async throws -> (Int, [String: Any]) {
                let (status, body, _) = try await Self.call(seeded.api, "POST", "/v1/groups/\(g)/members", token: token, json: ["add": add, "remove": remove])
                return (status, body)
            }
            let (added, addedBody) = try await change(u1, add: ["u4", "u5", "u4"], remove: ["u3"])
            #expect(added == 200 && Set((addedBody["members"] as? [[String: Any]] ?? []).compactMap { $0["userId"] as? String }) == ["u1", "u2", "u4", "u5"])
            #expect(try await change(u2, add: ["u6"]).0 == 403)  // a member, not an admin
            #expect(try await change(u9, add: ["u6"]).0 == 404)  // not a member
            let (unknown, unknownBody) = try await change(u1, add: ["nobody"])
            #expect(unknown == 422 && unknownBody["field"] as? String == "add", "the request's field, not the rule's: \(unknownBody)")
            // A body of the wrong shape: 400 naming the field in the API's words, not Swift's decoder's.
            for (json, words) in [(["add": NSNull()] as [String: Any], "\"add\" is null"), (["add": "u2"], "\"add\" has the wrong type")] {
                let (status, body, _) = try await Self.call(seeded.api, "POST", "/v1/groups/\(g)/members", token: u1, json: json)
                let detail = body["detail"] as? String ?? ""
                #expect(status == 400 && detail.contains(words) && !detail.contains("DecodingError") && !detail.contains("Array<"), "\(detail)")
            }
            let heavy = "a" + String(repeating: "\u{301}", count: 100)
            let (renamed, renamedBody, _) = try await Self.call(seeded.api, "PATCH", "/v1/groups/\(g)", token: u1, json: ["name": heavy])
            #expect(renamed == 422 && renamedBody["field"] as? String == "name", "\(renamedBody)")
            #expect(try await change(u1, remove: ["u1"]).0 == 409)  // the last admin
            #expect(try await change(u1, add: (6...256).map { "u\($0)" }).0 == 200)  // 4 + 251 = 255 members
            let (over, overBody) = try await change(u1, add: ["u257", "u258"])
            #expect(over == 422 && (overBody["type"] as? String)?.hasSuffix("too-many-members") == true)
            #expect(try await seeded.database().count("groupMember", where: "groupId", g) == 255)
    
        }
    }

    @Test func profileAndAlbumPhotos() async throws {
        try await SeededRouter.run { seeded in
            let u1 = TestTokens.hs256(sub: "u1"), u2 = TestTokens.hs256(sub: "u2")
            #expect(try await Self.call(seeded.api, "GET", "/v1/me/photo", token: u1).body["state"] as? String == "none")
            let jpeg = try Fixture.bytes("photos/storm-1920x1280.jpg")
            let location = try #require(try await ServeRulesTests.create(seeded, key: "profile_images/u1/me.jpg", length: jpeg.count, token: u1).header("Location"))
            #expect(try await ServeRulesTests.patch(seeded, location, offset: 0, body: Array(jpeg.prefix(100_000)), token: u1).status == 204)
            let uploading = try await Self.call(seeded.api, "GET", "/v1/me/photo", token: u1).body
            #expect(uploading["state"] as? String == "uploading" && uploading["acknowledgedBytes"] as? Int == 100_000)
            #expect(try await ServeRulesTests.patch(seeded, location, offset: 100_000, body: Array(jpeg[100_000...]), token: u1).status == 204)
            #expect(try await Self.call(seeded.api, "GET", "/v1/me/photo", token: u1).body["state"] as? String == "ready")
            #expect(seeded.stored("profile_images/u1/me.jpg") != nil)
            #expect(try await Self.call(seeded.api, "DELETE", "/v1/me/photo", token: u1).status == 204)
            #expect(try await Self.call(seeded.api, "GET", "/v1/me/photo", token: u1).body["state"] as? String == "none")
            #expect(seeded.stored("profile_images/u1/me.jpg") == nil, "the stored picture is deleted too")

            for name in ["a.jpg", "b.jpg"] {
                let bytes = try Fixture.bytes("orientation/landscape_3.jpg")
                let created = try await ServeRulesTests.createWithUpload(seeded, key: "user_photos/u1/trip/\(name)", bytes: bytes, token: u1)
                #expect(created.status == 201 && created.header("Upload-Offset") == String(bytes.count), "\(created)")
            }
            let album = try await Self.call(seeded.api, "GET", "/v1/albums/trip/photos", token: u1).body["photos"] as? [[String: Any]] ?? []
            #expect(album.compactMap { $0["key"] as? String } == ["user_photos/u1/trip/a.jpg", "user_photos/u1/trip/b.jpg"])
            #expect(album.allSatisfy { $0["state"] as? String == "ready" })
            let photoId = try #require(album.first?["id"] as? String)
            #expect((try await Self.call(seeded.api, "GET", "/v1/albums/trip/photos", token: u2).body["photos"] as? [Any])?.isEmpty == true)
            #expect(try await Self.call(seeded.api, "DELETE", "/v1/albums/trip/photos/\(photoId)", token: u2).status == 404)
            #expect(try await Self.call(seeded.api, "DELETE", "/v1/albums/other/photos/\(photoId)", token: u1).status == 404)
            #expect(try await Self.call(seeded.api, "DELETE", "/v1/albums/trip/photos/\(photoId)", token: u1).status == 204)
            #expect(seeded.stored("user_photos/u1/trip/a.jpg") == nil && seeded.stored("user_photos/u1/trip/b.jpg") != nil)
            #expect((try await Self.call(seeded.api, "GET", "/v1/albums/trip/photos", token: u1).body["photos"] as? [Any])?.count == 1)
            // A name no album can have: 422, not an empty album.
            for album in ["%2e%2e", "trip%2Fsub", "trip%00", "%2A"] {
                #expect(try await Self.call(seeded.api, "GET", "/v1/albums/\(album)/photos", token: u1).status == 422, "\(album)")
            }
        }
    }

    /// schemathesis (PyPI) generates requests from `/openapi.yaml` — examples, coverage, fuzzing and
    /// stateful sequences — with a valid token and every check (`--checks all`): no 5xx, every answer as the
    /// document says, valid requests accepted and invalid ones refused, 405 for methods a path does not have
    /// (the rules the document cannot say are listed in `schemathesis.toml`).
    @Test func schemathesisFindsNothing() async throws {
        // The rate limits are tested on their own (ServeLimitsTests); here they would only make schemathesis wait.
        let seeded = try await SeededServer.start(arguments: ["--writes-per-user", "0", "--writes-per-address", "0"])
        let config = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("TestSupport/Support/schemathesis.toml").path
        let result = try await runSupportCommand("st", [
            "--config-file", config, "run", seeded.server.base + "/openapi.yaml", "--url", seeded.server.base, "-H", "Authorization: Bearer \(TestTokens.hs256(sub: "u1"))",
            "--seed", "1", "--checks", "all",
        ])
        #expect(result.status == 0, "\(result.stdout.suffix(4000))")
        let summary = result.stdout.split(separator: "\n").first { $0.contains(" generated, ") }.map(String.init) ?? "?"
        print("schemathesis: \(summary.trimmingCharacters(in: .whitespaces))")
        let generated = summary.split(separator: " ").first { Int($0) != nil }.flatMap { Int($0) } ?? 0
        #expect(generated > 100, "schemathesis generated \(generated) cases: \(summary)")
        #expect(!seeded.server.log.contains(" 500"))
    }
}
