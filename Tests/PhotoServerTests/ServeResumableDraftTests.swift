import Foundation
import SQLKit
import PhotoPrep
import PhotoServices
import PhotoUpload
import Testing
import TestSupport

/// `photoprep serve` speaking the IETF resumable-upload draft (`/uploads/{key}`, `/resumable/{id}`):
/// driven by a client written from the draft's text (Support/draft_upload.py, raw sockets), by the
/// project's uploader through a proxy that cuts a chunk, and held to the same rules as tus (those on the server's router
/// in the test's process).
@Suite struct ServeResumableDraftTests {
    /// A creation cut off after half of its body, the offset retrieved, the rest appended: the photo
    /// stored (normalised) and recorded — on each interop version.
    @Test(arguments: [3, 5, 6]) func aCreationCutHalfWayIsResumedByHand(version: Int) async throws {
        let seeded = try await SeededServer.start()
        let key = "profile_images/u1/draft-\(version).jpg"
        let source = Fixture.path("orientation/landscape_6.jpg")
        let size = try #require(try FileManager.default.attributesOfItem(atPath: source)[.size] as? Int)
        let result = try await runSupportScript(
            "draft_upload.py", [seeded.server.base, key, source, "--token", TestTokens.hs256(sub: "u1"), "--version", String(version)])
        let line = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.stdout) \(result.stderr)")
        #expect(line["interim"] as? Int == 104)
        #expect((line["location"] as? String)?.hasPrefix("\(seeded.server.base)/resumable/") == true)
        // The server kept what arrived before the cut (it is flushed before it counts), nothing more.
        let offset = try #require(line["offset"] as? Int)
        #expect(offset > 0 && offset <= size / 2, "\(line)")
        #expect(line["status"] as? Int == 200, "\(line)")
        let headers = try #require(line["headers"] as? [String: String])
        #expect(headers["upload-offset"] == String(size))
        #expect(version >= 5 ? headers["upload-complete"] == "?1" : headers["upload-incomplete"] == "?0")
        #expect(headers["upload-draft-interop-version"] == String(version))
        let body = try #require(try JSONSerialization.jsonObject(with: Data((line["body"] as? String ?? "").utf8)) as? [String: String])
        #expect(body["key"] == key)
        _ = try checkNormalised(seeded.server.stored(key), preset: .profile, portrait: false)
        let user = try #require(try await seeded.database().one(User.self, from: "user", id: "u1"))
        // Its download URL, not where the server keeps it.
        #expect(user.profilePhotoKey == key && body["url"]?.hasPrefix("\(seeded.server.base)/media/\(key)?v=") == true, "\(body)")
        #expect(try await ServeReadTests.fetch(try #require(body["url"])).bytes == seeded.server.stored(key))
    }

    /// A 104 announces an upload that exists: a creation refused for its token, its path or its length gets
    /// its refusal alone, as the first answer on the connection.
    @Test func aRefusedCreationGetsNo104() async throws {
        let seeded = try await SeededServer.start()
        let u1 = TestTokens.hs256(sub: "u1")
        let cases: [(String, [String], String)] = [
            ("no token", [], "HTTP/1.1 401"),
            ("another user's folder", ["Authorization: Bearer \(u1)"], "HTTP/1.1 403"),
            ("length unknown", ["Authorization: Bearer \(u1)"], "HTTP/1.1 400"),
        ]
        for (what, headers, expected) in cases {
            let key = what == "another user's folder" ? "profile_images/u2/me.jpg" : "profile_images/u1/me.jpg"
            let complete = what == "length unknown" ? "?0" : "?1"
            let connection = try RawConnection(port: seeded.server.port)
            try connection.send(
                "POST /uploads/\(key) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpload-Draft-Interop-Version: 6\r\nUpload-Complete: \(complete)\r\n"
                    + headers.map { "\($0)\r\n" }.joined() + "Content-Length: 1000\r\n\r\n")
            try connection.send([UInt8](repeating: 0xFF, count: 1000))
            let answer = try await connection.receive(timeout: 10)
            #expect(answer.hasPrefix(expected), "\(what): \(answer.prefix(200))")
            #expect(!answer.contains(" 104 "), "\(what)")
        }
        #expect(seeded.server.storedKeys.isEmpty)
    }

    /// The project's uploader against the server: it sees `OPTIONS /uploads/` answered by the draft and
    /// speaks it; a chunk cut half-way is resumed from the server's offset, each byte beyond it stored once.
    @Test func theUploaderResumesACutChunkFromTheServersOffset() async throws {
        let seeded = try await SeededServer.start()
        let proxy = try FaultProxy(upstream: seeded.server.port, faults: ["--cut", "1"])
        let photo = try Fixture.bytes("photos/storm-1920x1280.jpg")
        var configuration = UploadConfiguration()
        configuration.chunkSize = 64 * 1024
        configuration.maxChunkSize = 64 * 1024
        configuration.initialBackoff = .milliseconds(50)
        let uploader = try Uploader(
            destination: "http://127.0.0.1:\(proxy.server.port)/uploads/", configuration: configuration,
            journal: UploadJournal(folder: try temporaryFolder()))
        let key = "group_photos/\(seeded.groupId)/photo.jpg"
        let task = await uploader.upload(.bytes(photo), request: UploadRequest(key: key, authorization: "Bearer \(TestTokens.hs256(sub: "u1"))"))
        var events: [UploadEvent] = []
        for await event in task.events { events.append(event) }
        guard case .finished(let location) = events.last else { Issue.record("not finished: \(events)"); return }
        #expect(location.contains("/resumable/"))
        #expect(events.contains { if case .retrying = $0 { true } else { false } })
        let log = proxy.dataLog
        #expect(log.first?.offset == 0 && log.first?.status == 0, "\(log)")
        // The uploader asks the offset after the cut; when it asks before the server has seen the cut connection end,
        // the answer is what was durable then (0), and its append there is refused 409 — nothing of it stored — and
        // answers the server's offset. At most once; what is accepted starts at the server's offset, each byte once.
        let accepted = log.dropFirst().filter { $0.status != 409 }
        #expect(log.dropFirst().filter { $0.status == 409 }.count <= 1, "\(log)")
        var expected = try #require(accepted.first?.offset, "\(log)")
        #expect(expected == 32 * 1024, "\(log)")
        for request in accepted {
            #expect(request.offset == expected && (200..<300).contains(request.status), "\(log)")
            expected += request.length
        }
        #expect(expected == photo.count)
        _ = try checkNormalised(seeded.server.stored(key), preset: .group)
        #expect(try await seeded.database().one(ChatGroup.self, from: "chatGroup", id: seeded.groupId)?.photoState == .done)
    }

    /// `OPTIONS` says which protocol and limit; an incomplete creation answers with its URL and offset;
    /// `DELETE` cancels it (its bytes gone, then 404); someone else's upload is 404 as if it did not exist.
    @Test func optionsIncompleteCreationAndCancellation() async throws {
        try await SeededRouter.run { server in
            let options = try await server.send("OPTIONS", "/uploads/", headers: ["Upload-Draft-Interop-Version": "6"])
            #expect(options.status == 200 && options.header("Upload-Draft-Interop-Version") == "6")
            #expect(options.header("Upload-Limit") == "max-size=\(10 * 1024 * 1024 - 1)")
            #expect(options.header("Tus-Version") == nil)

            let u1 = ["Authorization": "Bearer \(TestTokens.hs256(sub: "u1"))", "Upload-Draft-Interop-Version": "5"]
            let jpeg = try Fixture.bytes("photos/storm-1920x1280.jpg")
            let created = try await server.send(
                "POST", "/uploads/user_photos/u1/trip/storm.jpg", headers: u1.merging(["Upload-Complete": "?0", "Upload-Length": String(jpeg.count)]) { $1 },
                body: Array(jpeg.prefix(100_000)))
            #expect(created.status == 201 && created.header("Upload-Complete") == "?0" && created.header("Upload-Offset") == "100000")
            let location = try #require(created.header("Location"))
            #expect(SeededRouter.path(of: location).hasPrefix("/resumable/"))
            #expect(server.receivedBytes(location) == 100_000)

            let other = try await server.send(
                "HEAD", location, headers: ["Authorization": "Bearer \(TestTokens.hs256(sub: "u2"))", "Upload-Draft-Interop-Version": "5"])
            #expect(other.status == 404)
            let conflict = try await server.send(
                "PATCH", location, headers: u1.merging(["Upload-Offset": "5", "Upload-Complete": "?0"]) { $1 }, body: Array(jpeg[5..<1000]))
            #expect(conflict.status == 409 && conflict.header("Upload-Offset") == "100000" && conflict.header("Upload-Complete") == "?0")
            // An append that says another length: 400, nothing of it kept.
            let otherLength = try await server.send(
                "PATCH", location, headers: u1.merging(["Upload-Offset": "100000", "Upload-Complete": "?0", "Upload-Length": "4000"]) { $1 },
                body: Array(jpeg[100_000..<101_000]))
            #expect(otherLength.status == 400, "\(otherLength.status) \(otherLength.body)")
            #expect(server.receivedBytes(location) == 100_000)
            // A creation declaring more digits than any length has: 413, as too large, not 400 as no number.
            let huge = try await server.send("POST", "/uploads/user_photos/u1/trip/huge.jpg", headers: u1.merging(["Upload-Complete": "?0", "Upload-Length": "9223372036854775807"]) { $1 })
            #expect(huge.status == 413, "\(huge.status) \(huge.body)")
            let hugeTus = try await server.send(
                "POST", "/files/",
                headers: ["Authorization": u1["Authorization"]!, "Tus-Resumable": "1.0.0", "Upload-Length": "1000000000000000000",
                    "Upload-Metadata": "key " + Data("user_photos/u1/trip/huge.jpg".utf8).base64EncodedString()])
            #expect(hugeTus.status == 413, "\(hugeTus.status) \(hugeTus.body)")

            let cancelled = try await server.send("DELETE", location, headers: u1)
            #expect(cancelled.status == 204 && cancelled.header("Upload-Draft-Interop-Version") == "5")
            #expect(server.receivedBytes(location) == nil)
            #expect(try await server.send("HEAD", location, headers: u1).status == 404)
            #expect(server.storedKeys.isEmpty)
        }
    }

    /// What tus refuses, the draft refuses with the same status — and neither stores anything.
    @Test func theRulesRefuseByTheDraftWhatTheyRefuseByTus() async throws {
        try await SeededRouter.run { server in
            let gif = Array("GIF89a".utf8) + [UInt8](repeating: 0, count: 200)
            let jpeg = try Fixture.bytes("photos/storm-1920x1280.jpg")
            let tooLarge = 5 * 1024 * 1024
            struct Case {
                var name: String
                var token: String?
                var key: String
                var body: [UInt8]
                var declaredLength: Int?
                var status: Int
            }
            let u1 = TestTokens.hs256(sub: "u1"), u2 = TestTokens.hs256(sub: "u2")
            let cases = [
                Case(name: "no token", token: nil, key: "profile_images/u1/a.jpg", body: jpeg, status: 401),
                Case(name: "a token signed with another key", token: TestTokens.hs256(sub: "u1", secret: "another-secret-that-is-32-bytes-long"), key: "profile_images/u1/a.jpg", body: jpeg, status: 401),
                Case(name: "someone else's folder", token: u2, key: "profile_images/u1/a.jpg", body: jpeg, status: 403),
                Case(name: "a member who is not an admin", token: u2, key: "group_photos/\(server.groupId)/photo.jpg", body: jpeg, status: 403),
                Case(name: "traversal", token: u1, key: "profile_images/u1/../u2/a.jpg", body: jpeg, status: 403),
                Case(name: "a control character", token: u1, key: "profile_images/u1/a\u{1B}[31m.jpg", body: jpeg, status: 403),
                Case(name: "a dot-file", token: u1, key: "profile_images/u1/.htaccess", body: jpeg, status: 403),
                Case(name: "not a folder of ours", token: u1, key: "elsewhere/u1/a.jpg", body: jpeg, status: 403),
                Case(name: "5 MiB to profile_images", token: u1, key: "profile_images/u1/big.jpg", body: [], declaredLength: tooLarge, status: 413),
                Case(name: "a GIF", token: u1, key: "profile_images/u1/a.jpg", body: gif, status: 415),
            ]
            for test in cases {
                let length = test.declaredLength ?? test.body.count
                var tusHeaders = ["Tus-Resumable": "1.0.0", "Upload-Length": String(length), "Upload-Metadata": ServeRulesTests.metadata(test.key)]
                var draftHeaders = ["Upload-Draft-Interop-Version": "6"]
                if test.body.isEmpty {
                    draftHeaders["Upload-Complete"] = "?0"
                    draftHeaders["Upload-Length"] = String(length)
                } else {
                    tusHeaders["Content-Type"] = "application/offset+octet-stream"
                    draftHeaders["Upload-Complete"] = "?1"
                }
                if let token = test.token {
                    tusHeaders["Authorization"] = "Bearer \(token)"
                    draftHeaders["Authorization"] = "Bearer \(token)"
                }
                let viaTus = try await server.send("POST", "/files/", headers: tusHeaders, body: test.body.isEmpty ? nil : test.body)
                let path = test.key.split(separator: "/", omittingEmptySubsequences: false)
                    .map { $0.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~")))! }.joined(separator: "/")
                let viaDraft = try await server.send("POST", "/uploads/\(path)", headers: draftHeaders, body: test.body)
                #expect(viaTus.status == test.status, "tus, \(test.name): \(viaTus.status) \(viaTus.body)")
                #expect(viaDraft.status == test.status, "draft, \(test.name): \(viaDraft.status) \(viaDraft.body)")
                #expect(viaDraft.body == viaTus.body, "\(test.name)")
                #expect(viaDraft.header("Upload-Draft-Interop-Version") == "6")
            }
            #expect(server.storedKeys.isEmpty)
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: server.data.appendingPathComponent("uploads").path)
            #expect(leftovers.filter { $0.hasSuffix(".bin") }.isEmpty, "\(leftovers)")
            // The draft's own: an interop version it does not speak, an append without an offset.
            let unknownVersion = try await server.send("POST", "/uploads/profile_images/u1/a.jpg",
                headers: ["Upload-Draft-Interop-Version": "2", "Upload-Complete": "?1", "Authorization": "Bearer \(u1)"], body: jpeg)
            #expect(unknownVersion.status == 400)
            #expect(server.storedKeys.isEmpty)
        }
    }
}
