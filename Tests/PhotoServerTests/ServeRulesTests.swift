import Crypto
import Foundation
import Testing
import TestSupport

/// The server trusts no client: tokens, paths, sizes, types and ownership are checked on every request,
/// and a refused request stores nothing. On the server's router in the test's process (none of it needs a socket); the
/// helpers (`create`, `patch`, `head`) serve the socket tests too.
@Suite struct ServeRulesTests {
    static func metadata(_ key: String) -> String { "key " + Data(key.utf8).base64EncodedString() }

    /// `POST /files/` for `key`.
    static func create(_ server: any HTTPCalls, key: String, length: Int, token: String?, extra: [String: String] = [:]) async throws -> HTTPExchange {
        var headers = ["Tus-Resumable": "1.0.0", "Upload-Length": String(length), "Upload-Metadata": metadata(key)]
        if let token { headers["Authorization"] = "Bearer \(token)" }
        return try await server.send("POST", "/files/", headers: headers.merging(extra) { $1 }, body: nil)
    }

    /// `PATCH` of `body` at `offset` to the upload at `location` (the URL the creation answered with, or its path).
    static func patch(
        _ server: any HTTPCalls, _ location: String, offset: Int, body: [UInt8], token: String, extra: [String: String] = [:]
    ) async throws -> HTTPExchange {
        let headers = [
            "Tus-Resumable": "1.0.0", "Authorization": "Bearer \(token)", "Upload-Offset": String(offset),
            "Content-Type": "application/offset+octet-stream",
        ]
        return try await server.send("PATCH", location, headers: headers.merging(extra) { $1 }, body: body)
    }

    /// The same, to the URL `location` as it is.
    static func patch(_ location: String, offset: Int, body: [UInt8], token: String, extra: [String: String] = [:]) async throws -> HTTPExchange {
        try await patch(AbsoluteURLs(), location, offset: offset, body: body, token: token, extra: extra)
    }

    /// A PATCH of the whole `body` whose first `sent` bytes are sent now, on a raw connection the caller
    /// finishes (or not); returns once the server holds those bytes.
    static func slowPatch(_ server: PhotoServerProcess, _ location: String, body: [UInt8], sent: Int, token: String) async throws -> RawConnection {
        let before = try await receivedTotal(server)
        let connection = try patchHead(server, location, declaring: body.count, token: token)
        try connection.send(Array(body.prefix(sent)))
        // Read by the server: counted as received (written to the file a batch at a time, not yet flushed).
        let deadline = Date().addingTimeInterval(10)
        while try await receivedTotal(server) < before + sent && Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        return connection
    }

    /// The body bytes the server has read, all requests together (`photoprep_received_bytes_total`).
    static func receivedTotal(_ server: PhotoServerProcess) async throws -> Int {
        let metrics = try await HTTPExchange.send("GET", "\(server.base)/metrics")
        let line = metrics.body.split(separator: "\n").first { $0.hasPrefix("photoprep_received_bytes_total ") }
        return line.flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
    }

    /// A raw connection that has sent the head of a PATCH at offset 0 declaring `length` body bytes, and none of them.
    static func patchHead(_ server: PhotoServerProcess, _ location: String, declaring length: Int, token: String) throws -> RawConnection {
        let connection = try RawConnection(port: server.port)
        try connection.send(
            "PATCH \(location.dropFirst(server.base.count)) HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\nTus-Resumable: 1.0.0\r\n"
                + "Authorization: Bearer \(token)\r\nUpload-Offset: 0\r\nContent-Type: application/offset+octet-stream\r\n"
                + "Content-Length: \(length)\r\n\r\n")
        return connection
    }

    static func head(_ server: any HTTPCalls, _ location: String, token: String) async throws -> HTTPExchange {
        try await server.send("HEAD", location, headers: ["Tus-Resumable": "1.0.0", "Authorization": "Bearer \(token)"])
    }

    static func head(_ location: String, token: String) async throws -> HTTPExchange {
        try await head(AbsoluteURLs(), location, token: token)
    }

    /// `POST /files/` for `key` with the whole of `bytes` in it (creation with upload).
    static func createWithUpload(_ server: any HTTPCalls, key: String, bytes: [UInt8], token: String) async throws -> HTTPExchange {
        try await server.send(
            "POST", "/files/",
            headers: ["Tus-Resumable": "1.0.0", "Authorization": "Bearer \(token)", "Upload-Length": String(bytes.count),
                      "Upload-Metadata": metadata(key), "Content-Type": "application/offset+octet-stream"],
            body: bytes)
    }

    @Test func tokensThatDoNotVerifyAre401() async throws {
        try await SeededRouter.run { seeded in
            let key = "profile_images/u1/me.jpg"
            let cases: [(String, String?)] = [
                ("no token", nil),
                ("signed with another secret", TestTokens.hs256(sub: "u1", secret: "another-secret-of-at-least-32-bytes!!")),
                ("expired an hour ago", TestTokens.hs256(sub: "u1", expires: Date().addingTimeInterval(-3600))),
                ("alg none", TestTokens.unsigned(sub: "u1")),
                ("not a JWT", "u1.c2lnbmF0dXJl"),
                ("the payload changed after signing", Self.tampered(TestTokens.hs256(sub: "u2"), sub: "u1")),
                // Signed with the right secret, under a header that names another algorithm, or none, or an extension.
                ("HS256-signed, header alg none", TestTokens.hs256(sub: "u1", header: ["alg": "none"])),
                ("HS256-signed, header alg HS512", TestTokens.hs256(sub: "u1", header: ["alg": "HS512", "typ": "JWT"])),
                ("HS256-signed, header alg ES256", TestTokens.hs256(sub: "u1", header: ["alg": "ES256"])),
                ("HS256-signed, no alg", TestTokens.hs256(sub: "u1", header: ["typ": "JWT"])),
                ("HS256-signed, a critical extension", TestTokens.hs256(sub: "u1", header: ["alg": "HS256", "crit": ["exp-v2"], "exp-v2": 1])),
                ("a signature that is not base64url", String(TestTokens.hs256(sub: "u1").dropLast(3)) + "***"),
            ]
            for (what, token) in cases {
                let response = try await Self.create(seeded, key: key, length: 1000, token: token)
                #expect(response.status == 401, "\(what): \(response.status) \(response.body)")
                #expect(response.header("WWW-Authenticate") == "Bearer", "\(what)")
                // The reason is the server's own words: no library's error types, no addresses of this process.
                #expect(!response.body.contains("Error(") && !response.body.contains("$"), "\(what): \(response.body)")
            }
            // A token without exp is refused too (exp is required).
            let noExp = Self.hs256Without(exp: true, sub: "u1")
            #expect(try await Self.create(seeded, key: key, length: 1000, token: noExp).status == 401)
            // A subject that is no user id: a path, or a look-alike Swift's `==` equates with another user's id
            // (U+212A KELVIN SIGN is canonically "K"): refused, never let into uK's folder.
            for subject in ["u\u{212A}", "u1/../u2", ""] {
                let response = try await Self.create(seeded, key: "profile_images/uK/me.jpg", length: 1000, token: TestTokens.hs256(sub: subject))
                #expect(response.status == 401, "\(subject.debugDescription): \(response.status) \(response.body)")
            }
            #expect(seeded.storedKeys.isEmpty)
            #expect(try FileManager.default.contentsOfDirectory(atPath: seeded.data.appendingPathComponent("uploads").path).isEmpty)
            // Tokens never reach the log, which has every request's line.
            #expect(seeded.log.components(separatedBy: "POST /files/ 401").count > cases.count, "\(seeded.log.suffix(2000))")
            for (_, token) in cases { if let token { #expect(!seeded.log.contains(token)) } }
            // The same header, right: accepted (the forged ones above failed on their header alone).
            #expect(try await Self.create(seeded, key: key, length: 1000, token: TestTokens.hs256(sub: "u1", header: ["alg": "HS256"])).status == 201)
        }
    }

    @Test func pathsTheCallerMayNotWriteAre403() async throws {
        try await SeededRouter.run { seeded in
            let u2 = TestTokens.hs256(sub: "u2")
            let keys = [
                "profile_images/u1/me.jpg",  // another user's folder
                "user_photos/u1/trip/x.jpg",
                "group_photos/\(seeded.groupId)/photo.jpg",  // u2 is a member, not an admin
                "group_photos/no-such-group/photo.jpg",
                "user_photos/u2/../u1/x.jpg",  // traversal
                "profile_images/u2/../../etc/passwd",
                "profile_images/u2/%2e%2e",  // encoded traversal
                "profile_images/u2/..%2F..%2Fu1%2Fme.jpg",
                "profile_images/u2/.hidden.jpg",
                "profile_images/u2/a\u{0}b.jpg",  // control characters
                "profile_images/u2/line\nbreak.jpg",
                "/profile_images/u2/me.jpg",
                "other_folder/u2/me.jpg",
            ]
            for key in keys {
                let response = try await Self.create(seeded, key: key, length: 1000, token: u2)
                #expect(response.status == 403, "\(key.debugDescription): \(response.status) \(response.body)")
            }
            // The caller's own folder is fine.
            #expect(try await Self.create(seeded, key: "profile_images/u2/me.jpg", length: 1000, token: u2).status == 201)
            #expect(seeded.storedKeys.isEmpty)
        }
    }

    @Test func uploadsOverThePathLimitAre413BeforeAByteIsAccepted() async throws {
        try await SeededRouter.run { seeded in
            let u1 = TestTokens.hs256(sub: "u1")
            let limits = [
                ("profile_images/u1/me.jpg", 5 * 1024 * 1024), ("group_photos/\(seeded.groupId)/photo.jpg", 5 * 1024 * 1024),
                ("user_photos/u1/a/b.jpg", 10 * 1024 * 1024),
            ]
            for (key, limit) in limits {
                #expect(try await Self.create(seeded, key: key, length: limit, token: u1).status == 413, "\(key)")
                #expect(try await Self.create(seeded, key: key, length: limit - 1, token: u1).status == 201, "\(key)")
            }
            // A body longer than the declared length is refused and cut back.
            let jpeg = try Fixture.bytes("photos/storm-1920x1280.jpg")
            let created = try await Self.create(seeded, key: "user_photos/u1/a/c.jpg", length: 1000, token: u1)
            let location = try #require(created.header("Location"))
            let tooLong = try await Self.patch(seeded, location, offset: 0, body: Array(jpeg.prefix(5000)), token: u1)
            #expect(tooLong.status == 413)
            #expect(try await Self.head(seeded, location, token: u1).header("Upload-Offset") == "0")
            #expect(seeded.storedKeys.isEmpty)
        }
    }

    @Test(arguments: ["edge/not-an-image.txt", "edge/photo.gif", "edge/photo.tiff"])
    func anythingButAPhotoIs415WhateverItIsCalled(file: String) async throws {
        try await SeededRouter.run { seeded in
            let u1 = TestTokens.hs256(sub: "u1")
            let bytes = try Fixture.bytes(file)
            // Named .jpg and declared image/jpeg: the bytes decide.
            let created = try await Self.create(
                seeded, key: "profile_images/u1/me.jpg", length: bytes.count, token: u1, extra: ["Content-Type": "image/jpeg"])
            let location = try #require(created.header("Location"))
            let refused = try await Self.patch(seeded, location, offset: 0, body: bytes, token: u1)
            #expect(refused.status == 415, "\(refused.body)")
            #expect(refused.body.contains("profile_images/u1/me.jpg"))
            if file.hasSuffix(".gif") { #expect(refused.body.contains("GIF"), "\(refused.body)") }
            // The upload is gone, and nothing was stored.
            #expect(try await Self.head(seeded, location, token: u1).status == 404)
            #expect(seeded.receivedBytes(location) == nil)
            #expect(seeded.storedKeys.isEmpty)
            // With creation-with-upload too.
            let inOne = try await Self.createWithUpload(seeded, key: "profile_images/u1/me.jpg", bytes: bytes, token: u1)
            #expect(inOne.status == 415, "\(inOne.body)")
            #expect(seeded.storedKeys.isEmpty)
        }
    }

    /// The type is sniffed even when the bytes come one at a time.
    @Test func aTextFileSentByteByByteIsStill415() async throws {
        try await SeededRouter.run { seeded in
            let u1 = TestTokens.hs256(sub: "u1")
            let bytes = Array("just some text, no image".utf8)
            let location = try #require(try await Self.create(seeded, key: "profile_images/u1/x.jpg", length: bytes.count, token: u1).header("Location"))
            var statuses: [Int] = []
            for offset in 0..<16 {
                let response = try await Self.patch(seeded, location, offset: offset, body: [bytes[offset]], token: u1)
                statuses.append(response.status)
                if response.status != 204 { break }
            }
            #expect(statuses.last == 415 && statuses.dropLast().allSatisfy { $0 == 204 }, "\(statuses)")
        }
    }

    @Test func aFileThatIsNotADecodablePhotoIs422AndNothingIsStored() async throws {
        try await SeededRouter.run { seeded in
            let u1 = TestTokens.hs256(sub: "u1")
            // A JPEG header claiming 65,000 × 65,000, and a JPEG cut after its header.
            for (name, bytes) in [("huge", try Fixture.bytes("edge/huge-header.jpg")), ("cut", Array(try Fixture.bytes("photos/storm-1920x1280.jpg").prefix(600)))] {
                let result = try await Self.createWithUpload(seeded, key: "user_photos/u1/a/\(name).jpg", bytes: bytes, token: u1)
                #expect(result.status == 422, "\(name): \(result.status) \(result.body)")
                #expect(result.body.contains("user_photos/u1/a/\(name).jpg"))
                #expect(!result.body.contains(seeded.data.path) && !result.body.contains(".bin"), "no path of the server's own: \(result.body)")
            }
            #expect(seeded.storedKeys.isEmpty)
            #expect(try FileManager.default.contentsOfDirectory(atPath: seeded.data.appendingPathComponent("uploads").path).isEmpty)
        }
    }

    @Test func anotherUsersUploadIs404ForEveryRequest() async throws {
        try await SeededRouter.run { seeded in
            let u1 = TestTokens.hs256(sub: "u1"), u2 = TestTokens.hs256(sub: "u2")
            let jpeg = try Fixture.bytes("photos/storm-1920x1280.jpg")
            let location = try #require(try await Self.create(seeded, key: "profile_images/u1/me.jpg", length: jpeg.count, token: u1).header("Location"))
            #expect(try await Self.patch(seeded, location, offset: 0, body: Array(jpeg.prefix(1000)), token: u1).status == 204)
            #expect(try await Self.head(seeded, location, token: u2).status == 404)
            #expect(try await Self.patch(seeded, location, offset: 1000, body: Array(jpeg[1000..<2000]), token: u2).status == 404)
            #expect(try await seeded.send("DELETE", location, headers: ["Tus-Resumable": "1.0.0", "Authorization": "Bearer \(u2)"]).status == 404)
            // An id that does not exist looks the same.
            let unknown = "/files/" + String(repeating: "0", count: 32)
            #expect(try await Self.head(seeded, unknown, token: u2).status == 404)
            // The owner's upload is untouched.
            let head = try await Self.head(seeded, location, token: u1)
            #expect(head.status == 200 && head.header("Upload-Offset") == "1000")
            #expect(seeded.receivedBytes(location) == 1000)
        }
    }

    /// A user cannot fill the disk with uploads they never finish: 20 at once, then 429.
    @Test func unfinishedUploadsPerUserAreCapped() async throws {
        try await SeededRouter.run { seeded in
            let u1 = TestTokens.hs256(sub: "u1")
            var locations: [String] = []
            for i in 0..<20 {
                let created = try await Self.create(seeded, key: "user_photos/u1/a/\(i).jpg", length: 9 * 1024 * 1024, token: u1)
                #expect(created.status == 201)
                if let location = created.header("Location") { locations.append(location) }
            }
            let refused = try await Self.create(seeded, key: "user_photos/u1/a/20.jpg", length: 1000, token: u1)
            #expect(refused.status == 429 && refused.header("Retry-After") == "60", "\(refused.body)")
            // Another user is not affected; deleting one makes room.
            #expect(try await Self.create(seeded, key: "profile_images/u2/me.jpg", length: 1000, token: TestTokens.hs256(sub: "u2")).status == 201)
            _ = try await seeded.send("DELETE", locations[0], headers: ["Tus-Resumable": "1.0.0", "Authorization": "Bearer \(u1)"])
            #expect(try await Self.create(seeded, key: "user_photos/u1/a/20.jpg", length: 1000, token: u1).status == 201)
        }
    }

    // MARK: - Helpers

    /// The token with its payload replaced (the signature no longer matches).
    static func tampered(_ token: String, sub: String) -> String {
        let parts = token.split(separator: ".")
        let payload = Data(#"{"sub":"\#(sub)","exp":\#(Int(Date().timeIntervalSince1970) + 3600)}"#.utf8).base64EncodedString()
            .replacingOccurrences(of: "=", with: "").replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        return "\(parts[0]).\(payload).\(parts[2])"
    }

    /// An HS256 token with the test secret whose payload has no `exp`.
    static func hs256Without(exp: Bool, sub: String) -> String {
        func b64(_ data: Data) -> String {
            data.base64EncodedString().replacingOccurrences(of: "=", with: "").replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        }
        let input = b64(Data(#"{"alg":"HS256","typ":"JWT"}"#.utf8)) + "." + b64(Data(#"{"sub":"\#(sub)"}"#.utf8))
        let mac = HMAC<SHA256>.authenticationCode(for: Data(input.utf8), using: SymmetricKey(data: Data(TestTokens.secret.utf8)))
        return input + "." + b64(Data(mac))
    }
}
