import Foundation
import PhotoPrep
import PhotoServer
import PhotoServices
import SQLKit
import Testing
import TestSupport

/// What an app's screens get with each stored photo besides its URLs: its placeholder (a ThumbHash) in every API
/// photo object and through `PhotoClient`, and when it was taken (`takenAt`, from the EXIF read before it is dropped),
/// which albums are listed by — on SQLite and PostgreSQL; `--capture-time drop` keeps none.
@Suite struct ServePhotoDetailsTests {
    static let west = "1999-12-31T23:59:59-08:00", june = "2024-06-01T14:03:22+02:00"

    /// Uploads `fixture` to `key`: on the built server with a real tus client (tuspy), on the router in one request.
    static func upload(_ server: any HTTPCalls, _ key: String, _ fixture: String, token: String) async throws {
        guard let process = server as? PhotoServerProcess else {
            let answer = try await ServeRulesTests.createWithUpload(server, key: key, bytes: try Fixture.bytes(fixture), token: token)
            #expect(answer.status == 201, "\(key): \(answer)")
            return
        }
        let result = try await runSupportScript("tuspy_upload.py", [process.endpoint, key, Fixture.path(fixture), "--token", token])
        #expect(result.stdout.contains("\"ok\": true"), "\(key): \(result.stdout) \(result.stderr)")
    }

    /// A placeholder the API gave: a ThumbHash in base64 of the stored photo's shape (and colour, which
    /// `ThumbHashTests` holds to the photo's).
    static func expectPlaceholder(_ value: Any?, of stored: [UInt8]?, _ what: String) throws {
        let text = try #require(value as? String, "\(what): no placeholder")
        let hash = try #require(Data(base64Encoded: text).map { [UInt8]($0) }, "\(what): \(text)")
        let drawn = try #require(ThumbHash.decode(hash))
        let probe = try PhotoPipeline(preset: .photo).probe(try #require(stored, "\(what): nothing stored"))
        let ratio = Double(probe.width) / Double(probe.height)
        #expect(abs(log(Double(drawn.width) / Double(drawn.height) / ratio)) < 0.2, "\(what): \(drawn.width)×\(drawn.height) for \(probe.width)×\(probe.height)")
    }

    @Test(arguments: ["sqlite", "postgres"])
    func everyPhotoObjectHasItsPlaceholderAndCaptureTime(database: String) async throws {
        let server: PhotoServerProcess
        if database == "postgres" {
            let url = try await PostgresCluster.shared().newDatabase()
            server = try await onThread { try PhotoServerProcess(arguments: ["--database", url]) }
        } else {
            server = try await onThread { try PhotoServerProcess() }
        }
        defer { server.stop() }
        let u1 = TestTokens.hs256(sub: "u1", claims: ["name": "Ana"])

        // Added in this order; taken 2024, never said, 1999: listed 1999, 2024, then the one added now.
        try await Self.upload(server, "user_photos/u1/trip/a.jpg", "metadata/taken.jpg", token: u1)
        try await Self.upload(server, "user_photos/u1/trip/b.jpg", "photos/storm-1920x1280.jpg", token: u1)
        try await Self.upload(server, "user_photos/u1/trip/c.jpg", "metadata/taken-west.jpg", token: u1)
        let album = try await ServeAPITests.call(server, "GET", "/v1/albums/trip/photos", token: u1).body["photos"] as? [[String: Any]] ?? []
        #expect(album.compactMap { $0["key"] as? String } == ["c", "a", "b"].map { "user_photos/u1/trip/\($0).jpg" }, "\(album)")
        #expect(album.map { $0["takenAt"] as? String } == [Self.west, Self.june, nil])
        for photo in album {
            let key = try #require(photo["key"] as? String)
            try Self.expectPlaceholder(photo["placeholder"], of: server.stored(key), key)
            // The stored file carries no capture time: the EXIF went with the rest of the metadata.
            #expect(!(server.stored(key) ?? []).contains(Array("2024:06:01".utf8)) && !(server.stored(key) ?? []).contains(Array("1999:12:31".utf8)))
        }

        // The profile picture: in /v1/me/photo, and in the user object as profilePhotoPlaceholder.
        try await Self.upload(server, "profile_images/u1/me.jpg", "metadata/taken.heic", token: u1)
        let photo = try await ServeAPITests.call(server, "GET", "/v1/me/photo", token: u1).body
        #expect(photo["state"] as? String == "ready" && photo["takenAt"] as? String == Self.june, "\(photo)")
        try Self.expectPlaceholder(photo["placeholder"], of: server.stored("profile_images/u1/me.jpg"), "profile picture")
        let me = try await ServeAPITests.call(server, "GET", "/v1/me", token: u1).body
        #expect(me["profilePhotoPlaceholder"] as? String == photo["placeholder"] as? String, "\(me)")

        // Through PhotoClient: the same values.
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let client = try await PhotoClient(server: URL(string: server.base)!, folder: folder) { u1 }
        let listed = try await client.albumPhotos("trip")
        #expect(listed.map(\.placeholder) == album.map { $0["placeholder"] as? String } && listed.map(\.takenAt) == [Self.west, Self.june, nil])
        let profile = try await client.profilePhoto()
        #expect(profile.placeholder == photo["placeholder"] as? String && profile.takenAt == Self.june)
    }

    /// A group's photo object has them too (the group and its photo endpoints).
    @Test func aGroupsPhotoHasThem() async throws {
        try await SeededRouter.run { server in
            let u1 = TestTokens.hs256(sub: "u1")
            let key = "group_photos/\(server.groupId)/photo.jpg"
            try await Self.upload(server, key, "metadata/taken.png", token: u1)
            let group = try await ServeAPITests.call(server, "GET", "/v1/groups/\(server.groupId)", token: TestTokens.hs256(sub: "u2")).body
            let photo = try #require(group["photo"] as? [String: Any], "\(group)")
            #expect(photo["takenAt"] as? String == Self.june)
            try Self.expectPlaceholder(photo["placeholder"], of: server.stored(key), "group photo")
            let direct = try await ServeAPITests.call(server, "GET", "/v1/groups/\(server.groupId)/photo", token: u1).body
            #expect(direct["placeholder"] as? String == photo["placeholder"] as? String && direct["takenAt"] as? String == Self.june)
        }
    }

    /// `--capture-time drop`: no capture time recorded or shown; the album is in the order the photos were added.
    @Test func aServerThatKeepsNoCaptureTimes() async throws {
        try await SeededRouter.run(configure: { $0.keepsCaptureTime = false }) { server in
            let u1 = TestTokens.hs256(sub: "u1")
            try await Self.upload(server, "user_photos/u1/trip/a.jpg", "metadata/taken.jpg", token: u1)
            try await Self.upload(server, "user_photos/u1/trip/b.jpg", "metadata/taken-west.jpg", token: u1)
            let album = try await ServeAPITests.call(server, "GET", "/v1/albums/trip/photos", token: u1).body["photos"] as? [[String: Any]] ?? []
            #expect(album.compactMap { $0["key"] as? String } == ["user_photos/u1/trip/a.jpg", "user_photos/u1/trip/b.jpg"])
            #expect(album.allSatisfy { $0["takenAt"] == nil && $0["placeholder"] is String }, "\(album)")
            let rows = try await server.database().rows("SELECT \"takenAt\", \"takenAtUTC\" FROM \"storedPhoto\"")
            #expect(rows.count == 2 && rows.allSatisfy { (try? $0.decodeNil(column: "takenAt")) == true && (try? $0.decodeNil(column: "takenAtUTC")) == true })
        }
        let refused = try await photoprep(["serve", "--capture-time", "sometimes"], environment: ["PHOTOPREP_JWT_SECRET": TestTokens.secret])
        #expect(refused.status != 0 && refused.stderr.contains("--capture-time sometimes: keep or drop"), "\(refused.stderr)")
    }
}
