import Foundation
import PhotoPrep
import PhotoServices
import PhotoUpload
import SQLKit
import Testing
import TestSupport

/// Group photos' and profile pictures' thumbnails are squares: centred on the focal point the client sent with the
/// upload (tus metadata `focus`) or later through the API (`PUT …/photo/focus`), else on what the attention rule picks.
/// Checked on pixels: a magenta mark painted where the focal point is.
@Suite struct ServeSquareAvatarsTests {
    /// storm with a magenta square near its left edge (at focus -0.85,0), as a JPEG file.
    static func markedPhoto() async throws -> String {
        let file = try temporaryFolder().appendingPathComponent("marked.jpg").path
        let drawn = try await runSupportCommand(
            "convert", [Fixture.path("photos/storm-1920x1280.jpg"), "-fill", "#ff00ff", "-draw", "rectangle 104,600 184,680", "-quality", "95", file])
        try #require(drawn.status == 0, "\(drawn.stderr)")
        return file
    }

    /// Pixels of the JPEG at `url` (`size`×`size` expected) that are nearly pure magenta, read through ImageMagick.
    static func magenta(_ url: String, side: Int) async throws -> Int {
        let fetched = try await ServeReadTests.fetch(url)
        try #require(fetched.status == 200)
        let file = try temporaryFolder().appendingPathComponent("t.jpg")
        try Data(fetched.bytes).write(to: file)
        let ppm = try await runSupportCommand("convert", [file.path, "-compress", "none", "ppm:-"])
        let numbers = ppm.stdout.split(whereSeparator: \.isWhitespace).dropFirst(4).compactMap { Int($0) }
        #expect(ppm.stdout.hasPrefix("P3") && numbers.count == side * side * 3, "\(side)×\(side): \(numbers.count / 3) pixels")
        return stride(from: 0, to: numbers.count - 2, by: 3).filter { numbers[$0] > 200 && numbers[$0 + 1] < 90 && numbers[$0 + 2] > 200 }.count
    }

    static func thumbnails(_ photo: [String: Any]) throws -> [[String: Any]] {
        try #require(photo["thumbnails"] as? [[String: Any]], "\(photo)")
    }

    @Test func aProfilePicturesSquaresFollowItsFocalPoint() async throws {
        let server = try await onThread { try PhotoServerProcess() }
        defer { server.stop() }
        let u1 = TestTokens.hs256(sub: "u1")
        let marked = try await Self.markedPhoto()
        let sent = try await runSupportScript("tuspy_upload.py", [server.endpoint, "profile_images/u1/me.jpg", marked, "--token", u1, "--metadata", "focus=-0.85,0"])
        #expect(sent.stdout.contains("\"ok\": true"), "\(sent.stdout)")
        let photo = try await ServeAPITests.call(server, "GET", "/v1/me/photo", token: u1).body
        #expect(photo["focus"] as? String == "-0.85,0.0", "\(photo)")
        for thumbnail in try Self.thumbnails(photo) {
            let edge = try #require(thumbnail["edge"] as? Int)
            #expect(thumbnail["width"] as? Int == edge && thumbnail["height"] as? Int == edge, "\(thumbnail)")
            #expect(try await Self.magenta(try #require(thumbnail["downloadURL"] as? String), side: edge) > 0, "\(edge): the mark is in the square")
        }

        // Centred elsewhere through the API: the squares are made again without the mark, under new URLs.
        let oldURL = try #require(try Self.thumbnails(photo).first?["downloadURL"] as? String)
        let moved = try await ServeAPITests.call(server, "PUT", "/v1/me/photo/focus", token: u1, json: ["focus": "0.85,0"])
        #expect(moved.status == 200 && moved.body["focus"] as? String == "0.85,0.0", "\(moved.body)")
        for thumbnail in try Self.thumbnails(moved.body) {
            let edge = try #require(thumbnail["edge"] as? Int)
            #expect(try await Self.magenta(try #require(thumbnail["downloadURL"] as? String), side: edge) == 0, "\(edge): centred on the right")
        }
        #expect(try await ServeReadTests.fetch(oldURL).status == 404, "the old squares' URL is gone: no cache keeps showing them")

        // Malformed or out of range: 422 naming the field, nothing changed.
        for focus in ["2,0", "0", "left", ""] as [Any] + [NSNull()] where !(focus is NSNull) {
            let refused = try await ServeAPITests.call(server, "PUT", "/v1/me/photo/focus", token: u1, json: ["focus": focus])
            #expect(refused.status == 422 && (refused.body["field"] as? String) == "focus", "\(focus): \(refused.status) \(refused.body)")
        }
        let after = try await ServeAPITests.call(server, "GET", "/v1/me/photo", token: u1).body
        #expect(after["focus"] as? String == "0.85,0.0" && after["downloadURL"] as? String == moved.body["downloadURL"] as? String)
        // null: the attention rule's choice.
        let reset = try await ServeAPITests.call(server, "PUT", "/v1/me/photo/focus", token: u1, json: ["focus": NSNull()])
        #expect(reset.status == 200 && reset.body["focus"] == nil, "\(reset.body)")

        // Through PhotoClient.
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let client = try await PhotoClient(server: URL(string: server.base)!, folder: folder) { u1 }
        let set = try await client.setProfilePhotoFocus(FocalPoint(x: -0.85, y: 0))
        #expect(set.focus == "-0.85,0.0" && set.thumbnails?.count == 2)
        let thumbnail = try #require(set.thumbnails?.last)
        #expect(try await Self.magenta(thumbnail.downloadURL, side: thumbnail.edge) > 0)
        await #expect(throws: ServiceError.self) { _ = try await client.setGroupPhotoFocus("no-such-group", nil) }
    }

    /// PhotoClient sends the focal point with the upload (tus `Upload-Metadata`), and the library's uploader over the
    /// IETF draft in the creation's query: the stored photo's squares are centred on it from the start.
    @Test func aClientSendsTheFocalPointWithTheUpload() async throws {
        let seeded = try await SeededServer.start()
        defer { seeded.server.stop() }
        let server = seeded.server
        let u1 = TestTokens.hs256(sub: "u1")
        let marked = try await Self.markedPhoto()
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let client = try await PhotoClient(server: URL(string: server.base)!, folder: folder) { u1 }
        let job = try await client.jobs.wait(try await client.setProfilePhoto(.file(marked), focus: FocalPoint(x: -0.85, y: 0)))
        #expect(job.state == .done && job.focus == "-0.85,0.0", "\(job)")
        let photo = try await ServeAPITests.call(server, "GET", "/v1/me/photo", token: u1).body
        #expect(photo["focus"] as? String == "-0.85,0.0", "\(photo)")
        let square = try #require(try Self.thumbnails(photo).first { $0["edge"] as? Int == 256 })
        #expect(try await Self.magenta(try #require(square["downloadURL"] as? String), side: 256) > 0, "the mark, far left, is in the square")
        // Without one, the attention rule's square: the mark is not in it.
        let plain = try await client.jobs.wait(try await client.setProfilePhoto(.file(marked)))
        #expect(plain.state == .done && plain.focus == nil)
        let unfocused = try await ServeAPITests.call(server, "GET", "/v1/me/photo", token: u1).body
        #expect(unfocused["focus"] == nil)
        // A group's photo, by the IETF draft: the focal point in the creation's query.
        let uploader = try Uploader(
            destination: "\(server.base)/uploads/", configuration: UploadConfiguration(), journal: UploadJournal(folder: try temporaryFolder()))
        let key = "group_photos/\(seeded.groupId)/photo.jpg"
        let task = await uploader.upload(
            .file(marked), request: UploadRequest(key: key, metadata: ["focus": "-0.85,0.0"], authorization: "Bearer \(u1)"))
        var last: UploadEvent?
        for await event in task.events { last = event }
        guard case .finished = last else { Issue.record("not finished: \(String(describing: last))"); return }
        let group = try await ServeAPITests.call(server, "GET", "/v1/groups/\(seeded.groupId)/photo", token: u1).body
        #expect(group["focus"] as? String == "-0.85,0.0", "\(group)")
    }

    /// By the IETF draft (no metadata there), the focal point comes in the creation's query.
    @Test func aDraftUploadsFocalPointComesInItsQuery() async throws {
        let server = try await onThread { try PhotoServerProcess() }
        defer { server.stop() }
        let u1 = TestTokens.hs256(sub: "u1")
        let sent = try await runSupportScript(
            "draft_upload.py", [server.base, "profile_images/u1/me.jpg", try await Self.markedPhoto(), "--token", u1, "--query", "focus=-0.85,0"])
        #expect(sent.stdout.contains("\"status\": 200"), "\(sent.stdout) \(sent.stderr)")
        let photo = try await ServeAPITests.call(server, "GET", "/v1/me/photo", token: u1).body
        #expect(photo["focus"] as? String == "-0.85,0.0", "\(photo)")
        let thumbnail = try #require(try Self.thumbnails(photo).first { $0["edge"] as? Int == 256 })
        #expect(try await Self.magenta(try #require(thumbnail["downloadURL"] as? String), side: 256) > 0)
        let refused = try await HTTPExchange.send("POST", server.base + "/uploads/profile_images/u1/b.jpg?focus=0,9", headers: [
            "Authorization": "Bearer \(u1)", "Upload-Draft-Interop-Version": "6", "Upload-Complete": "?0", "Upload-Length": "1000", "Content-Length": "0",
        ])
        #expect(refused.status == 422 && refused.body.contains("focus"), "\(refused)")
    }

    /// A focal point that is not x,y within -1…1 is refused when the upload is created (422 naming it), nothing made.
    @Test func aMalformedFocusIsRefusedAtCreation() async throws {
        try await SeededRouter.run { server in
            let u1 = TestTokens.hs256(sub: "u1")
            let metadata = ServeRulesTests.metadata("profile_images/u1/me.jpg") + ",focus " + Data("1.5,0".utf8).base64EncodedString()
            let created = try await server.send("POST", "/files/", headers: [
                "Tus-Resumable": "1.0.0", "Upload-Length": "1000", "Upload-Metadata": metadata, "Authorization": "Bearer \(u1)",
            ])
            #expect(created.status == 422 && created.body.contains("focus"), "\(created)")
            #expect(created.header("Location") == nil)
        }
    }

    /// A group's photo: its admins centre it; a member who is not an admin gets 422 naming `focus` and nothing changes,
    /// someone outside the group 404. Without a
    /// focal point the squares come from the attention rule; with --square-avatars off, long-edge fits.
    @Test func aGroupsSquaresAreItsAdminsToCentre() async throws {
        let seeded = try await SeededServer.start()
        defer { seeded.server.stop() }
        let (u1, u2) = (TestTokens.hs256(sub: "u1"), TestTokens.hs256(sub: "u2"))
        let key = "group_photos/\(seeded.groupId)/photo.jpg"
        try await ServePhotoDetailsTests.upload(seeded.server, key, "photos/ladybird-2560x1600.jpg", token: u1)
        let photo = try await ServeAPITests.call(seeded.server, "GET", "/v1/groups/\(seeded.groupId)/photo", token: u2).body
        let squares = try Self.thumbnails(photo)
        #expect(photo["focus"] == nil && squares.count == 2 && squares.allSatisfy { $0["width"] as? Int == $0["edge"] as? Int && $0["height"] as? Int == $0["edge"] as? Int })
        let refused = try await ServeAPITests.call(seeded.server, "PUT", "/v1/groups/\(seeded.groupId)/photo/focus", token: u2, json: ["focus": "0,0"])
        #expect(refused.status == 422 && refused.body["field"] as? String == "focus", "\(refused.body)")
        let outsider = try await ServeAPITests.call(seeded.server, "PUT", "/v1/groups/\(seeded.groupId)/photo/focus", token: TestTokens.hs256(sub: "u9"), json: ["focus": "0,0"])
        #expect(outsider.status == 404, "\(outsider.body)")
        let database = try await seeded.database()
        #expect(try await database.one(StoredPhoto.self, from: "storedPhoto", id: key, key: "key")?.focus == nil)
        let centred = try await ServeAPITests.call(seeded.server, "PUT", "/v1/groups/\(seeded.groupId)/photo/focus", token: u1, json: ["focus": "0,0"])
        #expect(centred.status == 200 && centred.body["focus"] as? String == "0.0,0.0", "\(centred.body)")
        #expect(try await database.one(StoredPhoto.self, from: "storedPhoto", id: key, key: "key")?.focus == "0.0,0.0")

        let fits = try await onThread { try PhotoServerProcess(arguments: ["--square-avatars", "off"]) }
        defer { fits.stop() }
        try await ServePhotoDetailsTests.upload(fits, "profile_images/u1/me.jpg", "photos/ladybird-2560x1600.jpg", token: u1)
        let long = try await ServeAPITests.call(fits, "GET", "/v1/me/photo", token: u1).body
        let fitted = try Self.thumbnails(long)
        #expect(fitted.count == 2 && fitted.allSatisfy { $0["width"] as? Int == $0["edge"] as? Int && ($0["height"] as? Int ?? 0) < ($0["edge"] as? Int ?? 0) })
        #expect(try await ServeAPITests.call(fits, "PUT", "/v1/me/photo/focus", token: u1, json: ["focus": "0,0"]).status == 409)
    }
}
