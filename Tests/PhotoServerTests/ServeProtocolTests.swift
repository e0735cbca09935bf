import Crypto
import SQLKit
import PhotoPrep
import PhotoServices
import Foundation
import Testing
import TestSupport

/// tus 1.0 as the server speaks it: discovery, offsets, checksums, one writer at a time, expiration,
/// and the JWKS mode of authentication; `/health`, `/metrics` and the request log.
@Suite struct ServeProtocolTests {
    typealias Rules = ServeRulesTests

    @Test func optionsAdvertisesWhatTheServerSupports() async throws {
        try await SeededRouter.run { seeded in
            let options = try await seeded.send("OPTIONS", "/files/")
            #expect(options.status == 204)
            #expect(options.header("Tus-Version") == "1.0.0")
            #expect(Set(options.header("Tus-Extension")?.split(separator: ",").map(String.init) ?? [])
                == ["creation", "creation-with-upload", "termination", "checksum", "expiration"])
            #expect(options.header("Tus-Checksum-Algorithm") == "sha1,sha256")
            #expect(options.header("Tus-Max-Size") == String(10 * 1024 * 1024 - 1))
            // Without Tus-Resumable: 412.
            let noVersion = try await seeded.send("POST", "/files/", headers: ["Upload-Length": "10"])
            #expect(noVersion.status == 412 && noVersion.header("Tus-Version") == "1.0.0")
        }
    }

    @Test func offsetsChecksumsAndTermination() async throws {
        try await SeededRouter.run { seeded in
            let u1 = TestTokens.hs256(sub: "u1")
            let jpeg = try Fixture.bytes("photos/storm-1920x1280.jpg")
            let created = try await Rules.create(seeded, key: "user_photos/u1/a/storm.jpg", length: jpeg.count, token: u1)
            #expect(created.status == 201)
            // An IMF-fixdate a day ahead (the default expiry), in GMT.
            let expires = try #require(created.header("Upload-Expires"))
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
            let expiry = try #require(formatter.date(from: expires), "\(expires)").timeIntervalSinceNow
            #expect(expiry > 23 * 3600 && expiry <= 24 * 3600 + 1, "\(expires)")
            let location = try #require(created.header("Location"))
            #expect(location.hasPrefix("http://") && SeededRouter.path(of: location).hasPrefix("/files/"), "\(location)")

            // A wrong offset: 409, with the offset the server holds.
            let wrong = try await Rules.patch(seeded, location, offset: 10, body: Array(jpeg.prefix(100)), token: u1)
            #expect(wrong.status == 409 && wrong.header("Upload-Offset") == "0")
            // A checksum that does not match: 460, nothing kept.
            let first = Array(jpeg.prefix(300_000))
            let badSum = try await Rules.patch(seeded, location, offset: 0, body: first, token: u1, extra: ["Upload-Checksum": "sha1 " + Self.base64(Insecure.SHA1.hash(data: Data("x".utf8)))])
            #expect(badSum.status == 460)
            #expect(try await Rules.head(seeded, location, token: u1).header("Upload-Offset") == "0")
            #expect(seeded.receivedBytes(location) == 0)
            // An unknown algorithm: 400.
            #expect(try await Rules.patch(seeded, location, offset: 0, body: first, token: u1, extra: ["Upload-Checksum": "md5 AAAA"]).status == 400)
            // Matching sha1, then sha256.
            let sha1 = try await Rules.patch(seeded, location, offset: 0, body: first, token: u1, extra: ["Upload-Checksum": "sha1 " + Self.base64(Insecure.SHA1.hash(data: Data(first)))])
            #expect(sha1.status == 204 && sha1.header("Upload-Offset") == "300000")
            let rest = Array(jpeg[300_000...])
            let sha256 = try await Rules.patch(seeded, location, offset: 300_000, body: rest, token: u1, extra: ["Upload-Checksum": "sha256 " + Self.base64(SHA256.hash(data: Data(rest)))])
            #expect(sha256.status == 204 && sha256.header("Upload-Offset") == String(jpeg.count))
            #expect(seeded.stored("user_photos/u1/a/storm.jpg") != nil)
            // Once stored, HEAD says complete; a PATCH at the full offset (a client that lost the answer to its last
            // one and asked HEAD) is answered with it, and the last PATCH sent again is a conflict, not appended.
            #expect(try await Rules.head(seeded, location, token: u1).header("Upload-Offset") == String(jpeg.count))
            let atEnd = try await Rules.patch(seeded, location, offset: jpeg.count, body: [], token: u1)
            #expect(atEnd.status == 204 && atEnd.header("Upload-Offset") == String(jpeg.count), "\(atEnd.status)")
            // One with a body: nothing fits after the last byte — 413 before a byte of it is read.
            let past = try await Rules.patch(seeded, location, offset: jpeg.count, body: Array(jpeg.prefix(1000)), token: u1)
            #expect(past.status == 413 && past.header("Upload-Offset") == String(jpeg.count), "\(past.status) \(past.body)")
            #expect(try await Rules.patch(seeded, location, offset: 300_000, body: rest, token: u1).status == 409)
            #expect(seeded.stored("user_photos/u1/a/storm.jpg") != nil)

            // Termination: DELETE removes an unfinished upload and its bytes.
            let other = try #require(try await Rules.create(seeded, key: "user_photos/u1/a/x.jpg", length: jpeg.count, token: u1).header("Location"))
            #expect(try await Rules.patch(seeded, other, offset: 0, body: first, token: u1).status == 204)
            let deleted = try await seeded.send("DELETE", other, headers: ["Tus-Resumable": "1.0.0", "Authorization": "Bearer \(u1)"])
            #expect(deleted.status == 204)
            #expect(try await Rules.head(seeded, other, token: u1).status == 404)
            #expect(seeded.receivedBytes(other) == nil)
        }
    }

    /// A client that asks for a go-ahead before sending its body (`Expect: 100-continue`, curl's default for large
    /// bodies) gets `100 Continue` as soon as the PATCH is accepted, then the final answer after the body.
    @Test func expectContinueIsAnsweredBeforeTheBody() async throws {
        let seeded = try await SeededServer.start()
        let u1 = TestTokens.hs256(sub: "u1")
        let jpeg = try Fixture.bytes("photos/storm-1920x1280.jpg")
        let location = try #require(try await Rules.create(seeded.server, key: "user_photos/u1/a/c.jpg", length: jpeg.count, token: u1).header("Location"))
        let connection = try RawConnection(port: seeded.server.port)
        try connection.send(
            "PATCH \(location.dropFirst(seeded.server.base.count)) HTTP/1.1\r\nHost: 127.0.0.1:\(seeded.server.port)\r\nTus-Resumable: 1.0.0\r\n"
                + "Authorization: Bearer \(u1)\r\nUpload-Offset: 0\r\nContent-Type: application/offset+octet-stream\r\n"
                + "Content-Length: \(jpeg.count)\r\nExpect: 100-continue\r\n\r\n")
        // Nothing of the body sent: what arrives is the go-ahead, and only it.
        let interim = String(decoding: try await connection.receiveAll(idle: 2), as: UTF8.self)
        #expect(interim.hasPrefix("HTTP/1.1 100 Continue\r\n") && !interim.contains("204"), "\(interim)")
        try connection.send(jpeg)
        let answer = try await connection.receive(timeout: 60)
        #expect(answer.hasPrefix("HTTP/1.1 204"), "\(answer)")
        #expect(seeded.server.stored("user_photos/u1/a/c.jpg") != nil)
    }

    /// Behind a proxy, upload locations are built on the public URL, not on what the server listens on.
    @Test func locationsUseThePublicURL() async throws {
        let seeded = try await SeededServer.start(environment: ["PHOTOPREP_PUBLIC_URL": "https://uploads.example.com/"])
        let created = try await Rules.create(seeded.server, key: "profile_images/u1/me.jpg", length: 1000, token: TestTokens.hs256(sub: "u1"))
        let location = try #require(created.header("Location"))
        #expect(location.hasPrefix("https://uploads.example.com/files/") && location.count == "https://uploads.example.com/files/".count + 32)
    }

    /// One writer per upload: while a PATCH is still receiving its body, a second one gets 423, and the
    /// upload stays consistent.
    @Test func aSecondWriterIsLockedOut() async throws {
        let seeded = try await SeededServer.start()
        let u1 = TestTokens.hs256(sub: "u1")
        let jpeg = try Fixture.bytes("photos/storm-1920x1280.jpg")
        let location = try #require(try await Rules.create(seeded.server, key: "user_photos/u1/a/s.jpg", length: jpeg.count, token: u1).header("Location"))
        let slow = try await Rules.slowPatch(seeded.server, location, body: jpeg, sent: 300_000, token: u1)
        // HEAD meanwhile reports only what was flushed (nothing yet), not the 300,000 bytes received.
        #expect(try await Rules.receivedTotal(seeded.server) == 300_000)
        #expect(try await Rules.head(location, token: u1).header("Upload-Offset") == "0")
        let second = try await Rules.patch(location, offset: 0, body: Array(jpeg.prefix(1000)), token: u1)
        #expect(second.status == 423)
        let deleteWhileWriting = try await HTTPExchange.send("DELETE", location, headers: ["Tus-Resumable": "1.0.0", "Authorization": "Bearer \(u1)"])
        #expect(deleteWhileWriting.status == 423)
        // The first writer finishes normally.
        try slow.send(Array(jpeg[300_000...]))
        let answer = try await slow.receive(timeout: 60)
        #expect(answer.hasPrefix("HTTP/1.1 204"), "\(answer)")
        #expect(answer.contains("Upload-Offset: \(jpeg.count)"))
        #expect(seeded.server.stored("user_photos/u1/a/s.jpg") != nil)
    }

    /// Expiration: an unfinished upload is gone (record and bytes) once it expired.
    @Test func unfinishedUploadsExpire() async throws {
        let seeded = try await SeededServer.start(arguments: ["--upload-expiry", "4", "--sweep-seconds", "0.2"])
        let u1 = TestTokens.hs256(sub: "u1")
        let jpeg = try Fixture.bytes("photos/storm-1920x1280.jpg")
        let started = Date()
        // Created with its first bytes in one request (creation-with-upload): no race with the expiry.
        let created = try await HTTPExchange.send(
            "POST", seeded.server.endpoint,
            headers: ["Tus-Resumable": "1.0.0", "Authorization": "Bearer \(u1)", "Upload-Length": String(jpeg.count),
                      "Upload-Metadata": Rules.metadata("user_photos/u1/a/e.jpg"), "Content-Type": "application/offset+octet-stream"],
            body: Array(jpeg.prefix(1000)))
        #expect(created.status == 201 && created.header("Upload-Offset") == "1000" && created.header("Upload-Expires") != nil)
        let location = try #require(created.header("Location"))
        // 404 from the moment it expires; the sweep removes its files soon after.
        let uploads = seeded.server.data.appendingPathComponent("uploads").path
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, try await Rules.head(location, token: u1).status != 404 || !FileManager.default.contentsOfDirectory(atPath: uploads).isEmpty {
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(try await Rules.head(location, token: u1).status == 404)
        #expect(try FileManager.default.contentsOfDirectory(atPath: uploads).isEmpty)
        #expect(Date().timeIntervalSince(started) >= 4)
        #expect(try FileManager.default.contentsOfDirectory(atPath: seeded.server.data.appendingPathComponent("uploads").path).isEmpty)
    }

    /// All bytes arrived but the server stopped before storing the photo: on the next start the sweep
    /// (or the client's HEAD) finishes it.
    @Test func anUploadWhoseBytesAllArrivedIsFinishedAfterARestart() async throws {
        let seeded = try await SeededServer.start(arguments: ["--sweep-seconds", "0.2"])
        seeded.server.kill()
        let jpeg = try Fixture.bytes("photos/ladybird-2560x1600.jpg")
        let id = String(repeating: "ab", count: 16)
        let uploads = seeded.server.data.appendingPathComponent("uploads")
        try Data(jpeg).write(to: uploads.appendingPathComponent("\(id).bin"))
        let record: [String: Any] = [
            "id": id, "owner": "u1", "key": "profile_images/u1/me.jpg", "length": jpeg.count, "metadata": [:] as [String: String],
            "createdAt": Date().timeIntervalSinceReferenceDate, "expiresAt": Date().addingTimeInterval(3600).timeIntervalSinceReferenceDate,
            "state": "receiving",
        ]
        try JSONSerialization.data(withJSONObject: record).write(to: uploads.appendingPathComponent("\(id).info"))
        try seeded.server.start()
        // Finished: the photo stored, then the upload's bytes removed (a moment later: the photo appears first).
        let deadline = Date().addingTimeInterval(20)
        while (seeded.server.stored("profile_images/u1/me.jpg") == nil || seeded.server.receivedBytes(seeded.server.endpoint + id) != nil)
            && Date() < deadline
        {
            try await Task.sleep(for: .milliseconds(50))
        }
        _ = try checkNormalised(seeded.server.stored("profile_images/u1/me.jpg"), preset: .profile)
        #expect(seeded.server.receivedBytes(seeded.server.endpoint + id) == nil)
        let head = try await Rules.head(seeded.server.endpoint + id, token: TestTokens.hs256(sub: "u1"))
        #expect(head.status == 200 && head.header("Upload-Offset") == String(jpeg.count))
    }

    @Test func jwksTokensWithIssuerAndAudience() async throws {
        let key = P256.Signing.PrivateKey(), kid = "key-1"
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let jwks = folder.appendingPathComponent("jwks.json")
        try TestTokens.jwks(key, kid: kid).write(to: jwks, atomically: true, encoding: .utf8)
        let seeded = try await SeededServer.start(arguments: ["--jwks", jwks.path, "--issuer", "https://id.example.com", "--audience", "photoprep-app"])
        let claims: [String: Any] = ["iss": "https://id.example.com", "aud": "photoprep-app", "name": "Dana"]
        let good = try TestTokens.es256(sub: "u4", key: key, kid: kid, claims: claims)
        let jpeg = try Fixture.bytes("photos/storm-1920x1280.jpg")
        let upload = try await runSupportScript("tuspy_upload.py", [seeded.server.endpoint, "profile_images/u4/me.jpg", Fixture.path("photos/storm-1920x1280.jpg"), "--token", good])
        #expect(upload.stdout.contains("\"ok\": true"), "\(upload.stdout)")
        _ = try checkNormalised(seeded.server.stored("profile_images/u4/me.jpg"), preset: .profile)
        // A user the store did not know is added, named from the token.
        let user = try await seeded.database().one(User.self, from: "user", id: "u4")
        #expect(user?.displayName == "Dana" && user?.profilePhotoKey == "profile_images/u4/me.jpg")

        var refused: [(String, String)] = [
            ("wrong audience", try TestTokens.es256(sub: "u4", key: key, kid: kid, claims: claims.merging(["aud": "other-app"]) { $1 })),
            ("wrong issuer", try TestTokens.es256(sub: "u4", key: key, kid: kid, claims: claims.merging(["iss": "https://evil.example"]) { $1 })),
            ("another key, same kid", try TestTokens.es256(sub: "u4", key: P256.Signing.PrivateKey(), kid: kid, claims: claims)),
            ("expired", try TestTokens.es256(sub: "u4", key: key, kid: kid, expires: Date().addingTimeInterval(-120), claims: claims)),
            ("HS256 with the test secret", TestTokens.hs256(sub: "u4", claims: claims)),
        ]
        // HS256 signed with the public key's JSON as the secret (the classic algorithm confusion).
        refused.append(("HS256 keyed with the JWKS", TestTokens.hs256(sub: "u4", secret: try String(contentsOf: jwks, encoding: .utf8), claims: claims)))
        for (what, token) in refused {
            let response = try await Rules.create(seeded.server, key: "profile_images/u4/me2.jpg", length: jpeg.count, token: token)
            #expect(response.status == 401, "\(what): \(response.status)")
        }
    }

    @Test func healthMetricsAndTheRequestLog() async throws {
        let seeded = try await SeededServer.start()
        let u1 = TestTokens.hs256(sub: "u1")
        let health = try await HTTPExchange.send("GET", seeded.server.base + "/health")
        #expect(health.status == 200 && health.body.contains("\"ok\""))
        let jpeg = try Fixture.bytes("photos/storm-1920x1280.jpg")
        _ = try await Rules.create(seeded.server, key: "profile_images/u2/me.jpg", length: 100, token: u1)  // 403
        _ = try await Rules.create(seeded.server, key: "profile_images/u1/me.jpg", length: 100, token: nil)  // 401
        let location = try #require(try await Rules.create(seeded.server, key: "profile_images/u1/me.jpg", length: jpeg.count, token: u1).header("Location"))
        #expect(try await Rules.patch(location, offset: 0, body: jpeg, token: u1).status == 204)

        let metrics = try await HTTPExchange.send("GET", seeded.server.base + "/metrics")
        #expect(metrics.status == 200)
        let text = metrics.body
        #expect(text.contains(#"photoprep_requests_total{method="PATCH",status="204"} 1"#), "\(text)")
        #expect(text.contains(#"photoprep_requests_total{method="POST",status="201"} 1"#))
        #expect(text.contains("photoprep_received_bytes_total \(jpeg.count)"))
        #expect(text.contains(#"photoprep_rule_refusals_total{reason="auth"} 1"#))
        #expect(text.contains(#"photoprep_rule_refusals_total{reason="path"} 1"#))
        #expect(text.contains("photoprep_uploads_in_progress 0"))
        #expect(text.contains("photoprep_pipeline_seconds_count 1"))
        #expect(text.contains("photoprep_photos_stored_total 1"))

        // One line per request with method, path, status, bytes, duration and user; never the token.
        let lines = seeded.server.log.split(separator: "\n").filter { $0.contains("[PhotoServer]") }
        let patchLine = try #require(lines.first { $0.contains("PATCH /files/") })
        #expect(patchLine.contains("bytes=\(jpeg.count)") && patchLine.contains("user=u1") && patchLine.contains(" 204") && patchLine.contains("ms="))
        #expect(lines.contains { $0.contains("POST /files") && $0.contains(" 401") && $0.contains("user=-") })
        #expect(!seeded.server.log.contains(u1) && !seeded.server.log.contains(String(u1.split(separator: ".")[2])))
    }

    static func base64<D: Sequence>(_ digest: D) -> String where D.Element == UInt8 { Data(digest).base64EncodedString() }
}
