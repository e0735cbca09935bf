import Crypto
import Foundation
import PhotoServer
import PhotoServices
import Testing
import TestSupport

/// The app's review of each prepared photo before it is stored (`--review-url`), on the server's router: a real
/// receiver on 127.0.0.1 (`review_receiver.py`) that accepts, rejects, quarantines, is slow, fails or answers garbage.
@Suite struct ServeReviewTests {
    typealias Receiver = ServeHookTests.Receiver

    static func bearer(_ user: String) -> [String: String] { ["Authorization": "Bearer \(TestTokens.hs256(sub: user))"] }

    static func json(_ exchange: HTTPExchange) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(exchange.body.utf8)) as? [String: Any], "\(exchange)")
    }

    /// The files stored in storage whose key contains `part` (a photo's, and its thumbnails', which are kept apart).
    static func stored(_ server: SeededRouter, under part: String) -> [String] {
        let root = server.data.appendingPathComponent("storage")
        let keys = FileManager.default.enumerator(atPath: root.path)?.compactMap { $0 as? String } ?? []
        return keys.filter { key in
            var folder: ObjCBool = false
            return key.contains(part) && FileManager.default.fileExists(atPath: root.appendingPathComponent(key).path, isDirectory: &folder) && !folder.boolValue
        }.sorted()
    }

    static func events(_ server: SeededRouter) async throws -> [OutboxEvent] {
        let database = try await server.database()
        defer { Task { await database.close() } }
        return try await Outbox(database: database).events(limit: 100).reversed()
    }

    /// Accepted: the review was sent the photo as it is stored (its bytes, size, dimensions, thumbnails) and who uploaded it.
    @Test func anAcceptedPhotoIsStoredAndTheReviewSawItsBytes() async throws {
        let receiver = try await Receiver.start("review_receiver.py")
        try await SeededRouter.run(configure: { $0.reviewHook = ReviewHook(url: receiver.url("accept")) }) { server in
            let token = TestTokens.hs256(sub: "u1", claims: ["name": "Ana"])
            let answer = try await ServeRulesTests.createWithUpload(server, key: "profile_images/u1/me.jpg", bytes: try Fixture.bytes("orientation/landscape_1.jpg"), token: token)
            #expect(answer.status == 201, "\(answer)")
            let asked = try #require(receiver.requests.first?["body"] as? [String: Any])
            #expect(receiver.requests.count == 1 && asked["type"] as? String == "photo.review")
            #expect((asked["caller"] as? [String: Any])?["id"] as? String == "u1" && (asked["caller"] as? [String: Any])?["name"] as? String == "Ana", "\(asked)")
            let photo = try #require(asked["photo"] as? [String: Any])
            let file = try #require(FileManager.default.contents(atPath: server.data.appendingPathComponent("storage/profile_images/u1/me.jpg").path))
            let sha = SHA256.hash(data: file).map { String(format: "%02x", $0) }.joined()
            #expect(photo["key"] as? String == "profile_images/u1/me.jpg" && photo["jpeg"] as? Bool == true && photo["contentType"] as? String == "image/jpeg")
            #expect(photo["bytesSha256"] as? String == sha && photo["sha256"] as? String == sha && photo["size"] as? Int == file.count, "the stored bytes: \(photo)")
            #expect((photo["width"] as? Int ?? 0) > 0 && (photo["height"] as? Int ?? 0) > 0)
            #expect((asked["thumbnails"] as? [[String: Any]])?.compactMap { $0["edge"] as? Int } == [128, 256], "\(asked)")
            let metrics = try await server.send("GET", "/metrics")
            #expect(metrics.body.contains(#"photoprep_review_verdicts_total{verdict="accept"} 1"#), "\(metrics.body)")
            let me = try Self.json(try await server.send("GET", "/v1/me/photo", headers: Self.bearer("u1")))
            #expect(me["state"] as? String == "ready" && me["downloadURL"] is String && me["quarantine"] == nil, "\(me)")
        }
    }

    /// Rejected: the client gets 422 with the review's reason; nothing stored, nothing recorded, no event.
    @Test func aRejectedPhotoIsNotStoredAndTheClientGetsTheReason() async throws {
        let receiver = try await Receiver.start("review_receiver.py")
        try await SeededRouter.run(configure: { $0.reviewHook = ReviewHook(url: receiver.url("reject")) }) { server in
            let answer = try await ServeRulesTests.createWithUpload(
                server, key: "user_photos/u1/trip/a.jpg", bytes: try Fixture.bytes("orientation/landscape_1.jpg"), token: TestTokens.hs256(sub: "u1"))
            #expect(answer.status == 422 && answer.body.contains("the photo was rejected: nudity is not allowed here"), "\(answer)")
            #expect(Self.stored(server, under: "user_photos/u1").isEmpty)
            #expect(try await Self.events(server).map(\.type) == ["group.created"], "the seeded group's only")
            let album = try Self.json(try await server.send("GET", "/v1/albums/trip/photos", headers: Self.bearer("u1")))
            #expect((album["photos"] as? [Any])?.isEmpty == true, "\(album)")
            let metrics = try await server.send("GET", "/metrics")
            #expect(metrics.body.contains(#"photoprep_review_verdicts_total{verdict="reject"} 1"#), "\(metrics.body)")
        }
    }

    /// Quarantined: stored, but its links go only to its uploader and the admins; everyone else is told it is held (a
    /// group's photo) or sees no picture (a profile). An admin lists it and releases it: then everyone sees it.
    @Test func aQuarantinedPhotoIsSeenByItsUploaderAndAdminsUntilReleased() async throws {
        let receiver = try await Receiver.start("review_receiver.py")
        try await SeededRouter.run(configure: { $0.reviewHook = ReviewHook(url: receiver.url("quarantine")); $0.admins = ["u3"] }) { server in
            let photo = try Fixture.bytes("orientation/landscape_1.jpg")
            let groupKey = "group_photos/\(server.groupId)/photo.jpg"
            #expect(try await ServeRulesTests.createWithUpload(server, key: groupKey, bytes: photo, token: TestTokens.hs256(sub: "u1")).status == 201)
            #expect(try await ServeRulesTests.createWithUpload(server, key: "profile_images/u2/me.jpg", bytes: photo, token: TestTokens.hs256(sub: "u2")).status == 201)
            let objects = [groupKey, StoragePath.thumbnailKey(of: groupKey, edge: 128), StoragePath.thumbnailKey(of: groupKey, edge: 256)]
            #expect(objects.allSatisfy { FileManager.default.fileExists(atPath: server.data.appendingPathComponent("storage/\($0)").path) }, "stored with its thumbnails")
            let path = "/v1/groups/\(server.groupId)/photo"
            let uploader = try Self.json(try await server.send("GET", path, headers: Self.bearer("u1")))
            #expect(uploader["state"] as? String == "quarantined" && uploader["downloadURL"] is String && uploader["quarantine"] as? String == "needs a second look", "\(uploader)")
            let member = try Self.json(try await server.send("GET", path, headers: Self.bearer("u2")))
            #expect(member["state"] as? String == "quarantined" && member["downloadURL"] == nil && member["quarantine"] == nil && member["thumbnails"] == nil, "\(member)")
            let admin = try Self.json(try await server.send("GET", path, headers: Self.bearer("u3")))
            #expect(admin["downloadURL"] is String, "\(admin)")
            let other = try Self.json(try await server.send("GET", "/v1/users/u2", headers: Self.bearer("u1")))
            #expect(other["profilePhotoURL"] == nil && other["profilePhotoQuarantine"] == nil, "\(other)")
            let own = try Self.json(try await server.send("GET", "/v1/me", headers: Self.bearer("u2")))
            #expect(own["profilePhotoURL"] is String && own["profilePhotoQuarantine"] as? String == "needs a second look", "\(own)")

            #expect(try await server.send("GET", "/v1/quarantine", headers: Self.bearer("u1")).status == 403)
            let held = try #require(try Self.json(try await server.send("GET", "/v1/quarantine", headers: Self.bearer("u3")))["photos"] as? [[String: Any]])
            #expect(Set(held.compactMap { $0["key"] as? String }) == [groupKey, "profile_images/u2/me.jpg"], "\(held)")
            #expect(held.first { $0["key"] as? String == groupKey }?["uploadedBy"] as? String == "u1")
            let release = ["Content-Type": "application/json"].merging(Self.bearer("u3")) { $1 }
            #expect(try await server.send("POST", "/v1/quarantine/release", headers: Self.bearer("u2").merging(["Content-Type": "application/json"]) { $1 },
                body: Array(#"{"key": "\#(groupKey)"}"#.utf8)).status == 403)
            let released = try await server.send("POST", "/v1/quarantine/release", headers: release, body: Array(#"{"key": "\#(groupKey)"}"#.utf8))
            let releasedBody = try Self.json(released)
            #expect(released.status == 200 && releasedBody["quarantine"] == nil, "\(released)")
            let after = try Self.json(try await server.send("GET", path, headers: Self.bearer("u2")))
            let url = try #require(after["downloadURL"] as? String, "\(after)")
            #expect(after["state"] as? String == "ready")
            let media = try await server.send("GET", url)
            #expect(media.status == 200 && media.header("Content-Type") == "image/jpeg", "\(media)")
            #expect(try await server.send("POST", "/v1/quarantine/release", headers: release, body: Array(#"{"key": "\#(groupKey)"}"#.utf8)).status == 409)
            #expect(try await server.send("POST", "/v1/quarantine/release", headers: release, body: Array(#"{"key": "profile_images/u9/x.jpg"}"#.utf8)).status == 404)
            // u2's picture rejected after all: gone for u2 too, its file deleted.
            let rejected = try await server.send(
                "POST", "/v1/quarantine/reject", headers: release, body: Array(#"{"key": "profile_images/u2/me.jpg", "reason": "not a face"}"#.utf8))
            #expect(rejected.status == 200, "\(rejected)")
            let gone = try Self.json(try await server.send("GET", "/v1/me", headers: Self.bearer("u2")))
            #expect(gone["profilePhotoURL"] == nil && gone["profilePhotoQuarantine"] == nil, "\(gone)")
            #expect(!FileManager.default.fileExists(atPath: server.data.appendingPathComponent("storage/profile_images/u2/me.jpg").path))
            #expect(try await server.send("POST", "/v1/quarantine/reject", headers: release, body: Array(#"{"key": "\#(groupKey)"}"#.utf8)).status == 409,
                "released: not the admins' to delete")
            let events = try await Self.events(server)
            let stored = events.filter { $0.type == "photo.stored" }
            #expect(stored.count == 2 && stored.allSatisfy { $0.body.contains(#""quarantine":"needs a second look""#) }, "\(stored)")
            let releasedEvent = try #require(events.first { $0.type == "photo.released" })
            let deletedEvent = try #require(events.last)
            #expect(deletedEvent.type == "photo.deleted" && deletedEvent.body.contains(#""reason":"not a face""#), "\(deletedEvent)")
            #expect(releasedEvent.type == "photo.released" && releasedEvent.body.contains(#""by":"u3""#) && releasedEvent.body.contains(#""uploadedBy":"u1""#), "\(releasedEvent)")
        }
    }

    /// `photoprep quarantine` on the server's data folder: lists what the review held, releases one (served to everyone
    /// afterwards), rejects one (its file deleted, the event naming the admin and the reason); an unknown key, a photo
    /// not held, and a decision without `--as` are refused with exit 1 and why.
    @Test func theQuarantineCommandListsReleasesAndRejects() async throws {
        let receiver = try await Receiver.start("review_receiver.py")
        try await SeededRouter.run(configure: { $0.reviewHook = ReviewHook(url: receiver.url("quarantine")) }) { server in
            let photo = try Fixture.bytes("orientation/landscape_1.jpg")
            let (album, picture) = ("user_photos/u1/trip/a.jpg", "profile_images/u2/me.jpg")
            #expect(try await ServeRulesTests.createWithUpload(server, key: album, bytes: photo, token: TestTokens.hs256(sub: "u1")).status == 201)
            #expect(try await ServeRulesTests.createWithUpload(server, key: picture, bytes: photo, token: TestTokens.hs256(sub: "u2")).status == 201)
            let data = ["--data", server.data.path]
            let listed = try await photoprep(["quarantine", "list", "--json"] + data)
            #expect(listed.status == 0 && Set(listed.jsonLines.compactMap { $0["key"] as? String }) == [album, picture], "\(listed)")
            #expect(listed.jsonLines.allSatisfy { $0["quarantine"] as? String == "needs a second look" && ($0["size"] as? Int ?? 0) > 0 }, "\(listed.stdout)")
            #expect(listed.jsonLines.first { $0["key"] as? String == album }?["uploadedBy"] as? String == "u1", "\(listed.stdout)")

            let unnamed = try await photoprep(["quarantine", "release", album] + data)
            #expect(unnamed.status != 0 && unnamed.stderr.contains("--as"), "\(unnamed)")
            let released = try await photoprep(["quarantine", "release", album, "--as", "u3"] + data)
            #expect(released.status == 0 && released.stdout.hasPrefix("\(album)  released  uploaded by u1"), "\(released)")
            let media = try Self.json(try await server.send("GET", "/v1/albums/trip/photos", headers: Self.bearer("u1")))["photos"] as? [[String: Any]]
            #expect(media?.first?["state"] as? String == "ready", "\(String(describing: media))")
            let again = try await photoprep(["quarantine", "release", album, "--as", "u3"] + data)
            #expect(again.status != 0 && again.stderr.contains("is not quarantined"), "\(again)")
            let unknown = try await photoprep(["quarantine", "reject", "profile_images/u9/x.jpg", "--reason", "no", "--as", "u3"] + data)
            #expect(unknown.status != 0 && unknown.stderr.contains("profile_images/u9/x.jpg"), "\(unknown)")

            let rejected = try await photoprep(["quarantine", "reject", picture, "--reason", "not a face", "--as", "u3", "--json"] + data)
            #expect(rejected.status == 0 && rejected.jsonLines.first?["state"] as? String == "rejected", "\(rejected)")
            #expect(!FileManager.default.fileExists(atPath: server.data.appendingPathComponent("storage/\(picture)").path))
            let deleted = try #require(try await Self.events(server).last)
            #expect(deleted.type == "photo.deleted" && deleted.body.contains(#""reason":"not a face""#) && deleted.body.contains(#""by":"u3""#), "\(deleted)")
            let empty = try await photoprep(["quarantine"] + data)
            #expect(empty.status == 0 && empty.stdout.isEmpty, "\(empty)")
        }
    }

    /// A review that cannot be asked — nobody listening, 500, the connection reset, not JSON, slower (60 s) than its 1 s
    /// timeout — does as its policy says: refuse (503: nothing stored, the bytes kept for the client to ask again),
    /// allow (stored), quarantine (stored, held); each logged and counted.
    @Test(arguments: ["down", "error", "reset", "garbage", "slow"])
    func aReviewThatCannotBeAskedDoesAsItsPolicySays(failure: String) async throws {
        let receiver = try await Receiver.start("review_receiver.py")
        let url = failure == "down" ? "http://127.0.0.1:\(ServerProcess.freePort())/accept" : receiver.url(failure)
        for policy in ReviewHook.Failure.allCases {
            try await SeededRouter.run(configure: { $0.reviewHook = ReviewHook(url: url, timeout: .seconds(1), onFailure: policy) }) { server in
                let started = ContinuousClock.now
                let answer = try await ServeRulesTests.createWithUpload(
                    server, key: "user_photos/u1/trip/a.jpg", bytes: try Fixture.bytes("orientation/landscape_1.jpg"), token: TestTokens.hs256(sub: "u1"))
                #expect(ContinuousClock.now - started < .seconds(30), "answered in bounded time, not after the slow receiver's 60 s")
                let album = try Self.json(try await server.send("GET", "/v1/albums/trip/photos", headers: Self.bearer("u1")))["photos"] as? [[String: Any]]
                switch policy {
                case .refuse:
                    #expect(answer.status == 503 && answer.header("Retry-After") != nil, "\(answer)")
                    #expect(!answer.body.contains("127.0.0.1") && !answer.body.contains(failure), "\(answer.body)")
                    #expect(Self.stored(server, under: "user_photos").isEmpty && album?.isEmpty == true)
                    #expect(try await ServeHookTests.unfinished(server) == 1, "the bytes kept for the client to ask again")
                case .allow:
                    #expect(answer.status == 201, "\(answer)")
                    #expect(album?.first?["state"] as? String == "ready", "\(String(describing: album))")
                case .quarantine:
                    #expect(answer.status == 201, "\(answer)")
                    #expect(album?.first?["state"] as? String == "quarantined"
                        && album?.first?["quarantine"] as? String == "not reviewed: the review hook did not answer", "\(String(describing: album))")
                }
                #expect(server.log.contains("the review hook failed") && server.log.contains("policy=\(policy.rawValue)"), "\(server.log)")
                let metrics = try await server.send("GET", "/metrics")
                #expect(metrics.body.contains(#"photoprep_review_verdicts_total{verdict="failed"} 1"#), "\(metrics.body)")
            }
        }
    }

    /// Two `photoprep serve` instances on one PostgreSQL database and one storage folder, both asking the same hook and
    /// review: a photo quarantined through one is held on the other too, and released through either.
    @Test func twoInstancesOnPostgreSQLAskTheHooksAndShareTheQuarantine() async throws {
        let review = try await Receiver.start("review_receiver.py")
        let hook = try await Receiver.start()
        let url = try await PostgresCluster.shared().newDatabase()
        let shared = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: shared) }
        let arguments = [
            "--database", url, "--to", shared.path, "--review-url", review.url("quarantine"), "--hook-url", hook.url("accept"), "--admin", "u3",
        ]
        let first = try await onThread { try PhotoServerProcess(arguments: arguments) }
        defer { first.stop() }
        let second = try await onThread { try PhotoServerProcess(arguments: arguments) }
        defer { second.stop() }
        let photo = try Fixture.bytes("orientation/landscape_1.jpg")
        for (server, user) in [(first, "u2"), (second, "u1")] {
            let answer = try await ServeRulesTests.createWithUpload(server, key: "profile_images/\(user)/me.jpg", bytes: photo, token: TestTokens.hs256(sub: user))
            #expect(answer.status == 201, "\(answer)")
        }
        #expect(hook.requests.count == 2 && review.requests.count == 2, "each creation asked, each photo reviewed, whichever instance took it")
        let own = try Self.json(try await second.send("GET", "/v1/me", headers: Self.bearer("u2")))
        #expect(own["profilePhotoURL"] is String && own["profilePhotoQuarantine"] as? String == "needs a second look", "\(own)")
        let other = try Self.json(try await second.send("GET", "/v1/users/u2", headers: Self.bearer("u1")))
        #expect(other["profilePhotoURL"] == nil, "\(other)")
        let held = try #require(try Self.json(try await second.send("GET", "/v1/quarantine", headers: Self.bearer("u3")))["photos"] as? [[String: Any]])
        #expect(Set(held.compactMap { $0["key"] as? String }) == ["profile_images/u1/me.jpg", "profile_images/u2/me.jpg"], "\(held)")
        let release = ["Content-Type": "application/json"].merging(Self.bearer("u3")) { $1 }
        let released = try await first.send("POST", "/v1/quarantine/release", headers: release, body: Array(#"{"key": "profile_images/u2/me.jpg"}"#.utf8))
        #expect(released.status == 200, "\(released)")
        let after = try Self.json(try await second.send("GET", "/v1/users/u2", headers: Self.bearer("u1")))
        let link = try #require(after["profilePhotoURL"] as? String, "\(after)")
        #expect(try await first.send("GET", link).status == 200)
        #expect(try await second.send("POST", "/v1/quarantine/release", headers: release, body: Array(#"{"key": "profile_images/u2/me.jpg"}"#.utf8)).status == 409)
    }
}
