import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import PhotoPrep
@testable import PhotoUpload
import Testing
import TestSupport

/// Photos back out of the built server (`GET`/`HEAD /media/{key}`): download URLs that need no
/// `Authorization`, the read rules for bearer tokens, 404 for everyone else, and HTTP's caching and
/// range semantics checked byte for byte against what storage holds.
@Suite struct ServeReadTests {
    struct Fetched {
        var status: Int
        var headers: [String: String]
        var bytes: [UInt8]
        func header(_ name: String) -> String? { headers[name.lowercased()] }
    }

    static func fetch(
        _ url: String, method: HTTPMethod = .GET, headers: [String: String] = [:], token: String? = nil, client: HTTPClient = .shared
    ) async throws -> Fetched {
        var request = HTTPClientRequest(url: url)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        let response = try await client.execute(request, timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 32 << 20)
        var fields: [String: String] = [:]
        for header in response.headers { fields[header.name.lowercased()] = header.value }
        return Fetched(status: Int(response.status.code), headers: fields, bytes: Array(buffer: body))
    }

    /// Uploads the photo `file` to `key` through tus as the token's user; the server stores it normalised.
    static func upload(_ server: PhotoServerProcess, _ file: String, to key: String, token: String) async throws {
        let jpeg = try Fixture.bytes(file)
        let location = try #require(try await ServeRulesTests.create(server, key: key, length: jpeg.count, token: token).header("Location"))
        let finished = try await ServeRulesTests.patch(location, offset: 0, body: jpeg, token: token)
        try #require(finished.status == 204, "\(finished.status) \(finished.body)")
    }

    static func downloadURL(_ server: PhotoServerProcess, _ path: String, token: String) async throws -> String {
        let photo = try await ServeAPITests.call(server, "GET", path, token: token)
        return try #require(photo.body["downloadURL"] as? String, "\(photo.body)")
    }

    /// A client that reports redirects instead of following them (shut down afterwards, whatever happens).
    static func withoutRedirects(_ body: (HTTPClient) async throws -> Void) async throws {
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))
        do {
            try await body(client)
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }

    static func sha256(_ bytes: [UInt8]) -> String { SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined() }

    @Test func aGroupPhotoIsReadThroughItsDownloadURLAndByMembersOnly() async throws {
        let seeded = try await SeededServer.start()
        let server = seeded.server
        let key = "group_photos/\(seeded.groupId)/photo.jpg"
        let (admin, member, outsider) = (TestTokens.hs256(sub: "u1"), TestTokens.hs256(sub: "u2"), TestTokens.hs256(sub: "u9"))
        try await Self.upload(server, "photos/storm-1920x1280.jpg", to: key, token: admin)
        let stored = try #require(server.stored(key))
        let url = try await Self.downloadURL(server, "/v1/groups/\(seeded.groupId)/photo", token: member)
        #expect(url.hasPrefix("\(server.base)/media/\(key)?v="), "\(url)")

        // The download URL, no Authorization: the stored bytes, cacheable forever.
        let whole = try await Self.fetch(url)
        #expect(whole.status == 200 && whole.bytes == stored)
        #expect(whole.header("Content-Type") == "image/jpeg" && whole.header("Content-Length") == String(stored.count))
        #expect(whole.header("ETag") == "\"\(Self.sha256(stored))\"")
        #expect(whole.header("Cache-Control") == "private, max-age=31536000, immutable", "kept by the browser, by no shared cache")
        #expect(whole.header("Vary") == nil, "no --cors-origin: nothing depends on Origin")
        #expect(whole.header("X-Content-Type-Options") == "nosniff" && whole.header("Accept-Ranges") == "bytes")
        let lastModified = try #require(whole.header("Last-Modified"))
        // HEAD: the same headers, no body.
        let head = try await Self.fetch(url, method: .HEAD)
        #expect(head.status == 200 && head.bytes.isEmpty && head.header("Content-Length") == String(stored.count))
        #expect(head.header("ETag") == whole.header("ETag") && head.header("Last-Modified") == lastModified)
        // Conditional requests.
        let etag = try #require(whole.header("ETag"))
        let revalidated = try await Self.fetch(url, headers: ["If-None-Match": etag])
        #expect(revalidated.status == 304 && revalidated.bytes.isEmpty && revalidated.header("ETag") == etag)
        #expect(try await Self.fetch(url, headers: ["If-None-Match": "\"other\", \(etag)"]).status == 304)
        #expect(try await Self.fetch(url, headers: ["If-None-Match": "\"other\""]).status == 200)
        #expect(try await Self.fetch(url, headers: ["If-Modified-Since": lastModified]).status == 304)
        #expect(try await Self.fetch(url, headers: ["If-Modified-Since": "Sat, 01 Jan 2000 00:00:00 GMT"]).status == 200)
        #expect(try await Self.fetch(url, headers: ["If-None-Match": "\"other\"", "If-Modified-Since": lastModified]).status == 200, "If-None-Match wins")
        // Ranges, byte for byte.
        let n = stored.count
        for (range, expected) in [("bytes=0-99", 0..<100), ("bytes=-10", (n - 10)..<n), ("bytes=\(n - 5)-", (n - 5)..<n), ("bytes=100-\(n + 50)", 100..<n)] {
            let part = try await Self.fetch(url, headers: ["Range": range])
            #expect(part.status == 206 && part.bytes == Array(stored[expected]), "\(range)")
            #expect(part.header("Content-Range") == "bytes \(expected.lowerBound)-\(expected.upperBound - 1)/\(n)", "\(range)")
            #expect(part.header("Content-Length") == String(expected.count), "\(range)")
        }
        let beyond = try await Self.fetch(url, headers: ["Range": "bytes=\(n)-"])
        #expect(beyond.status == 416 && beyond.header("Content-Range") == "bytes */\(n)" && beyond.bytes.isEmpty)
        #expect(try await Self.fetch(url, headers: ["Range": "bytes=0-9", "If-Range": "\"old\""]).bytes == stored, "a changed photo: the whole of it")
        #expect(try await Self.fetch(url, headers: ["Range": "bytes=0-9,20-29"]).bytes == stored, "several ranges: the whole of it")

        // Its thumbnails, made on arrival: listed with their sizes, read like the photo, decoded to those sizes.
        let photoBody = try await ServeAPITests.call(server, "GET", "/v1/groups/\(seeded.groupId)/photo", token: member).body
        let thumbnails = try #require(photoBody["thumbnails"] as? [[String: Any]])
        #expect(thumbnails.compactMap { $0["edge"] as? Int } == [128, 256])
        for thumbnail in thumbnails {
            let edge = try #require(thumbnail["edge"] as? Int)
            let bytes = try #require(server.stored("thumbnails/\(edge)/\(key)"))
            let fetched = try await Self.fetch(try #require(thumbnail["downloadURL"] as? String))
            #expect(fetched.status == 200 && fetched.bytes == bytes && fetched.header("ETag") == "\"\(Self.sha256(bytes))\"")
            // Small objects are answered from memory once read: the same bytes and headers; ranges included.
            let thumbnailURL = try #require(thumbnail["downloadURL"] as? String)
            let fromMemory = try await Self.fetch(thumbnailURL)
            #expect(fromMemory.bytes == bytes && fromMemory.status == 200)
            #expect(fromMemory.headers.filter { $0.key != "date" } == fetched.headers.filter { $0.key != "date" }, "\(fromMemory.headers) \(fetched.headers)")
            // Answered again with the headers kept for the plain answer (`WholeAnswers`): still the same.
            let again = try await Self.fetch(thumbnailURL)
            #expect(again.bytes == bytes && again.headers.filter { $0.key != "date" } == fetched.headers.filter { $0.key != "date" })
            let headFromMemory = try await Self.fetch(thumbnailURL, method: .HEAD)
            #expect(headFromMemory.status == 200 && headFromMemory.bytes.isEmpty && headFromMemory.header("Content-Length") == String(bytes.count))
            let part = try await Self.fetch(thumbnailURL, headers: ["Range": "bytes=10-19"])
            #expect(part.status == 206 && part.bytes == Array(bytes[10..<20]) && part.header("Content-Range") == "bytes 10-19/\(bytes.count)")
            let probe = try PhotoPipeline(preset: .group).probe(bytes)
            #expect(probe.format == .jpeg && max(probe.width, probe.height) == edge, "\(edge)")
            #expect(probe.width == thumbnail["width"] as? Int && probe.height == thumbnail["height"] as? Int)
            #expect(try await Self.fetch("\(server.base)/media/\(key)?size=\(edge)", token: member).bytes == bytes)
            #expect(try await Self.fetch("\(server.base)/media/\(key)?size=\(edge)", token: outsider).status == 404)
        }
        #expect(try await Self.fetch(url + "&size=64").status == 404, "a size that was not made")

        // Wrong, missing or partial credentials: 404, like a photo that does not exist.
        let token = try #require(URLComponents(string: url)?.queryItems?.first { $0.name == "token" }?.value)
        let plain = "\(server.base)/media/\(key)"
        for attempt in [
            url.replacingOccurrences(of: token, with: String(token.reversed())), url.replacingOccurrences(of: "v=", with: "v=0"),
            plain, plain + "?token=\(token)", "\(server.base)/media/group_photos/nosuchgroup/photo.jpg?v=0&token=\(token)",
        ] {
            let refused = try await Self.fetch(attempt)
            #expect(refused.status == 404 && !refused.bytes.elementsEqual(stored), "\(attempt)")
        }
        // A bearer token: members read it (privately), others do not learn it exists.
        let asMember = try await Self.fetch(plain, token: member)
        #expect(asMember.status == 200 && asMember.bytes == stored && asMember.header("Cache-Control") == "private, no-cache")
        #expect(try await Self.fetch(plain, token: outsider).status == 404)
        #expect(try await Self.fetch(plain, token: ServeRulesTests.tampered(member, sub: "u2")).status == 404)

        // A regenerated token: only an admin may; the old URL stops working.
        let tokenPath = "/v1/groups/\(seeded.groupId)/photo/token"
        #expect(try await ServeAPITests.call(server, "POST", tokenPath, token: member).status == 403)
        #expect(try await ServeAPITests.call(server, "POST", tokenPath, token: outsider).status == 404)
        let regenerated = try #require(try await ServeAPITests.call(server, "POST", tokenPath, token: admin).body["downloadURL"] as? String)
        let listed = try await Self.downloadURL(server, "/v1/groups/\(seeded.groupId)/photo", token: member)
        #expect(regenerated != url && regenerated == listed)
        #expect(try await Self.fetch(url).status == 404)
        #expect(try await Self.fetch(url + "&size=128").status == 404, "the old thumbnail URLs too")
        #expect(try await Self.fetch(regenerated).bytes == stored)

        // A new photo is a new URL; the old one is 404.
        try await Self.upload(server, "photos/ladybird-2560x1600.jpg", to: key, token: admin)
        let replaced = try #require(server.stored(key))
        let newURL = try await Self.downloadURL(server, "/v1/groups/\(seeded.groupId)/photo", token: admin)
        #expect(replaced != stored && newURL != regenerated)
        #expect(try await Self.fetch(regenerated).status == 404)
        #expect(try await Self.fetch(newURL).bytes == replaced)
    }

    /// Pipelined requests are answered in their order, a thumbnail answered from memory among API calls.
    @Test func pipelinedRequestsAreAnsweredInOrder() async throws {
        let seeded = try await SeededServer.start()
        let server = seeded.server
        let u1 = TestTokens.hs256(sub: "u1")
        try await Self.upload(server, "photos/storm-1920x1280.jpg", to: "group_photos/\(seeded.groupId)/photo.jpg", token: u1)
        let thumbnail = try await Self.downloadURL(server, "/v1/groups/\(seeded.groupId)/photo", token: u1) + "&size=128"
        let expected = try await Self.fetch(thumbnail)  // now in memory
        #expect(expected.status == 200)
        let target = thumbnail.dropFirst(server.base.count)
        let connection = try RawConnection(port: server.port)
        let requests = [
            "GET /v1/me HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(u1)\r\n\r\n", "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
            "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", "HEAD \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
            "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        ]
        try connection.send(requests.joined())
        var bytes = try await connection.receiveAll(idle: 2)[...]
        var answers: [(status: String, type: String, body: [UInt8])] = []
        while let end = bytes.firstRange(of: Array("\r\n\r\n".utf8)) {
            let head = String(decoding: bytes[..<end.lowerBound], as: UTF8.self).split(separator: "\r\n")
            func field(_ name: String) -> String? {
                head.first { $0.lowercased().hasPrefix(name + ":") }.map { String($0.dropFirst(name.count + 1)).trimmingCharacters(in: .whitespaces) }
            }
            let length = answers.count == 3 ? 0 : Int(field("content-length") ?? "0") ?? 0  // the HEAD's answer has no body
            answers.append((String(head.first ?? ""), field("content-type") ?? "", Array(bytes[end.upperBound...].prefix(length))))
            bytes = bytes[(end.upperBound + length)...]
        }
        #expect(answers.map(\.status) == Array(repeating: "HTTP/1.1 200 OK", count: 5))
        #expect(answers.map(\.type) == ["application/json", "image/jpeg", "application/json", "image/jpeg", "image/jpeg"])
        #expect(answers[1].body == expected.bytes && answers[4].body == expected.bytes)
    }

    /// Download URLs answered from memory on the event loop (`MediaOnEventLoop`) are logged and counted as
    /// every request is, keep `Connection: close`, and answer a wrong token as the router does.
    @Test func answersFromMemoryAreLoggedCountedAndCloseWhenAsked() async throws {
        let seeded = try await SeededServer.start()
        let server = seeded.server
        let u1 = TestTokens.hs256(sub: "u1")
        let key = "group_photos/\(seeded.groupId)/photo.jpg"
        try await Self.upload(server, "photos/storm-1920x1280.jpg", to: key, token: u1)
        let thumbnail = try await Self.downloadURL(server, "/v1/groups/\(seeded.groupId)/photo", token: u1) + "&size=256"
        let stored = try #require(server.stored("thumbnails/256/\(key)"))
        #expect(try await Self.fetch(thumbnail).bytes == stored)  // now in memory

        func served() async throws -> Int {
            let text = try await HTTPExchange.send("GET", server.base + "/metrics").body
            let line = text.split(separator: "\n").first { $0.hasPrefix(#"photoprep_requests_total{method="GET",status="200"}"#) }
            return Int(try #require(line?.split(separator: " ").last)) ?? -1
        }
        let before = try await served()
        let logged = server.log.components(separatedBy: "GET /media/\(key) 200").count
        for _ in 0..<3 { #expect(try await Self.fetch(thumbnail).bytes == stored) }
        #expect(try await served() == before + 4, "three answers and the first /metrics call")
        #expect(server.log.components(separatedBy: "GET /media/\(key) 200").count == logged + 3, "\(server.log)")

        // `Connection: close`: answered, then closed.
        let connection = try RawConnection(port: server.port)
        try connection.send("GET \(thumbnail.dropFirst(server.base.count)) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        let answer = try await connection.receiveAll(idle: 5)
        let end = try #require(answer.firstRange(of: Array("\r\n\r\n".utf8)))
        #expect(String(decoding: answer[..<end.lowerBound], as: UTF8.self).hasPrefix("HTTP/1.1 200 OK"))
        #expect(Array(answer[end.upperBound...]) == stored)
        #expect(connection.peerClosed, "closed after the answer")

        // A wrong token for a photo in memory: the router's 404, as for any photo that does not exist.
        let wrong = try await Self.fetch(thumbnail.replacingOccurrences(of: "token=", with: "token=0"))
        #expect(wrong.status == 404 && wrong.header("Content-Type") == "application/problem+json")
    }

    @Test func profilePicturesAreReadByAnyoneSignedInAndAReplacedOneIsGone() async throws {
        let seeded = try await SeededServer.start()
        let server = seeded.server
        let (owner, other) = (TestTokens.hs256(sub: "u3"), TestTokens.hs256(sub: "u9"))
        try await Self.upload(server, "orientation/landscape_6.jpg", to: "profile_images/u3/a.jpg", token: owner)
        let first = try await Self.downloadURL(server, "/v1/me/photo", token: owner)
        let stored = try #require(server.stored("profile_images/u3/a.jpg"))
        #expect(try await Self.fetch(first).bytes == stored)
        #expect(try await ServeAPITests.call(server, "GET", "/v1/users/u3", token: other).body["profilePhotoDownloadURL"] as? String == first)
        #expect(try await Self.fetch("\(server.base)/media/profile_images/u3/a.jpg", token: other).bytes == stored, "any signed-in user")
        #expect(try await Self.fetch("\(server.base)/media/profile_images/u3/a.jpg").status == 404, "nobody without a token")

        #expect(server.stored("thumbnails/128/profile_images/u3/a.jpg") != nil)
        #expect(try await Self.fetch(first + "&size=256").status == 200)
        try await Self.upload(server, "orientation/landscape_3.jpg", to: "profile_images/u3/b.jpg", token: owner)
        let second = try await Self.downloadURL(server, "/v1/me/photo", token: owner)
        #expect(try await Self.fetch(first).status == 404 && server.stored("profile_images/u3/a.jpg") == nil, "the old picture and its URL are gone")
        #expect(try await Self.fetch(first + "&size=256").status == 404)
        #expect(server.stored("thumbnails/128/profile_images/u3/a.jpg") == nil && server.stored("thumbnails/256/profile_images/u3/a.jpg") == nil)
        #expect(server.stored("thumbnails/256/profile_images/u3/b.jpg") != nil)
        #expect(try await Self.fetch(second).bytes == server.stored("profile_images/u3/b.jpg"))

        let regenerated = try #require(try await ServeAPITests.call(server, "POST", "/v1/me/photo/token", token: owner).body["downloadURL"] as? String)
        #expect(try await Self.fetch(second).status == 404)
        #expect(try await Self.fetch(regenerated).status == 200)
        #expect(try await ServeAPITests.call(server, "DELETE", "/v1/me/photo", token: owner).status == 204)
        // A token asked for with no picture: 409, as for a group without its photo.
        #expect(try await ServeAPITests.call(server, "POST", "/v1/me/photo/token", token: owner).status == 409)
        #expect(try await Self.fetch(regenerated).status == 404)
        #expect(server.storedKeys.filter { $0.contains("profile_images/u3/") }.isEmpty, "the picture and its thumbnails are deleted: \(server.storedKeys)")
    }

    /// A download URL serves only its version's bytes. A new photo is stored over the old one's file before its record
    /// is written; until it is (and for as long as the database refuses it) the old URL is the old version, gone: 404 —
    /// not the new bytes under the old ETag and a year of `immutable`. Simulated by writing over the stored files: a
    /// large photo (streamed from its file), other bytes of the same size and of another size; a thumbnail (read
    /// into memory) before it was ever read. The record's own bytes back: served again.
    @Test func aDownloadURLServesOnlyItsVersionsBytes() async throws {
        let seeded = try await SeededServer.start(arguments: ["--quality", "max"])  // the budget filled: a photo over 512 KiB
        let server = seeded.server
        let u1 = TestTokens.hs256(sub: "u1")
        let key = "user_photos/u1/trip/big.jpg"
        try await Self.upload(server, "photos/ladybird-2560x1600.jpg", to: key, token: u1)
        let stored = try #require(server.stored(key))
        #expect(stored.count > 512 * 1024, "streamed from its file, not kept in memory: \(stored.count) bytes")
        let album = try await ServeAPITests.call(server, "GET", "/v1/albums/trip/photos", token: u1)
        let item = try #require((album.body["photos"] as? [[String: Any]])?.first, "\(album.body)")
        let url = try #require(item["downloadURL"] as? String, "\(item)")
        let thumbnailURL = try #require((item["thumbnails"] as? [[String: Any]])?.first?["downloadURL"] as? String, "\(item)")
        let file = server.data.appendingPathComponent("storage").appendingPathComponent(key)
        let thumbnailFile = server.data.appendingPathComponent("storage").appendingPathComponent(try #require(server.storedKeys.first { $0.hasPrefix("thumbnails/") && $0.hasSuffix("/\(key)") }))

        var sameSize = stored
        sameSize[stored.count / 2] ^= 0xFF
        let thumbnail = try Data(contentsOf: thumbnailFile)
        try Data(thumbnail.reversed()).write(to: thumbnailFile)
        #expect(try await Self.fetch(thumbnailURL).status == 404, "a thumbnail whose file is not its version's")
        try thumbnail.write(to: thumbnailFile)
        #expect(try await Self.fetch(thumbnailURL).bytes == [UInt8](thumbnail))
        #expect(try await Self.fetch(url).bytes == stored)
        for (other, what) in [(sameSize, "same size"), (Array(stored.prefix(stored.count - 1000)), "shorter"), (stored + [0, 1, 2], "longer")] {
            try Data(other).write(to: file, options: .atomic)  // a new file renamed into place, as the store writes one
            let answer = try await Self.fetch(url)
            #expect(answer.status == 404, "\(what): \(answer.status), \(answer.bytes.count) bytes")
            #expect(try await Self.fetch(url, headers: ["Range": "bytes=0-99"]).status == 404, "\(what), a range")
        }
        try Data(stored).write(to: file)  // written over in place: a file with another identity again
        let back = try await Self.fetch(url)
        #expect(back.status == 200 && back.bytes == stored, "its own bytes again")
        #expect(try await Self.fetch(url, headers: ["Range": "bytes=100-199"]).bytes == Array(stored[100..<200]))
    }

    /// The answer from memory checks the key as the router does: a look-alike of a stored key (KELVIN SIGN for K,
    /// which Swift's == equates with it) is 404 whether or not the real one was just read.
    @Test func aLookAlikeKeyIsNotAnsweredFromMemory() async throws {
        let seeded = try await SeededServer.start()
        let server = seeded.server
        let u1 = TestTokens.hs256(sub: "u1")
        try await Self.upload(server, "photos/storm-1920x1280.jpg", to: "profile_images/u1/K.jpg", token: u1)
        let url = try await Self.downloadURL(server, "/v1/me/photo", token: u1)
        #expect(url.contains("/media/profile_images/u1/K.jpg?"), "\(url)")
        let lookAlike = url.replacingOccurrences(of: "/K.jpg?", with: "/%E2%84%AA.jpg?")
        #expect(try await Self.fetch(lookAlike).status == 404, "through the router")
        for _ in 0..<3 {
            #expect(try await Self.fetch(url).status == 200)
            #expect(try await Self.fetch(lookAlike).status == 404, "with the real one in memory")
        }
    }

    /// Photos kept in S3 (moto on 127.0.0.1): after the same checks, a 307 to a short-lived presigned GET
    /// that fetches the stored object (ranges included) without any credentials of the reader's.
    @Test func aPhotoInS3IsARedirectToAPresignedGet() async throws {
        let moto = try MotoServer()
        try await moto.createBucket("photos")
        let seeded = try await SeededServer.start(arguments: ["--to", "s3://photos/prod"], environment: moto.environment())
        let server = seeded.server
        let key = "group_photos/\(seeded.groupId)/photo.jpg"
        let admin = TestTokens.hs256(sub: "u1")
        try await Self.upload(server, "photos/storm-1920x1280.jpg", to: key, token: admin)
        let stored = try #require(try await S3Store(url: "s3://photos", environment: moto.environment()).download("prod/\(key)", client: .shared))
        let url = try await Self.downloadURL(server, "/v1/groups/\(seeded.groupId)/photo", token: admin)
        try await Self.withoutRedirects { direct in
            let redirect = try await Self.fetch(url, client: direct)
            let presigned = try #require(redirect.header("Location"))
            #expect(redirect.status == 307 && presigned.hasPrefix("\(moto.endpoint)/photos/prod/\(key)?") && presigned.contains("X-Amz-Expires=300"))
            #expect(redirect.header("ETag") == "\"\(Self.sha256(stored))\"")
            // Kept a minute, not a year: the presigned URL it leads to is valid for five.
            #expect(redirect.header("Cache-Control") == "private, max-age=60")
            #expect(try await Self.fetch(presigned).bytes == stored)
            let part = try await Self.fetch(presigned, headers: ["Range": "bytes=0-99"])
            #expect(part.status == 206 && part.bytes == Array(stored.prefix(100)))
            // The same refusals before any redirect.
            #expect(try await Self.fetch(url.replacingOccurrences(of: "token=", with: "token=x"), client: direct).status == 404)
            #expect(try await Self.fetch("\(server.base)/media/\(key)", token: TestTokens.hs256(sub: "u9"), client: direct).status == 404)
            #expect(try await Self.fetch("\(server.base)/media/\(key)", token: TestTokens.hs256(sub: "u2"), client: direct).status == 307)
        }
    }

    /// In a real browser (Debian's Chromium through Playwright): a page of `<img src="DOWNLOAD_URL">` shows
    /// a group photo and its thumbnail at their stored sizes; visiting again and reloading costs the server
    /// no 200 (the URLs are immutable: answered from the browser's cache, or by 304).
    @Test func aGroupPhotoShowsInABrowserAndComesFromItsCacheAfterwards() async throws {
        let seeded = try await SeededServer.start()
        let server = seeded.server
        let key = "group_photos/\(seeded.groupId)/photo.jpg"
        let admin = TestTokens.hs256(sub: "u1")
        try await Self.upload(server, "photos/ladybird-2560x1600.jpg", to: key, token: admin)
        let photo = try await ServeAPITests.call(server, "GET", "/v1/groups/\(seeded.groupId)/photo", token: TestTokens.hs256(sub: "u2")).body
        let url = try #require(photo["downloadURL"] as? String)
        let thumbnail = try #require((photo["thumbnails"] as? [[String: Any]])?.first { $0["edge"] as? Int == 256 })
        let stored = try PhotoPipeline(preset: .group).probe(try #require(server.stored(key)))
        let expected = [[stored.width, stored.height], [try #require(thumbnail["width"] as? Int), try #require(thumbnail["height"] as? Int)]]
        #expect(expected[0] == [2048, 1280] && expected[1] == [256, 256], "the photo, and its square avatar thumbnail")

        let result = try await runSupportScript("browser_images.py", ["--server-log", server.logFile.path, url, try #require(thumbnail["downloadURL"] as? String)])
        try #require(result.status == 0, "\(result.stderr.suffix(3000))")
        let loads = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: [String: Any]], "\(result.stdout)")
        for name in ["first", "second", "reload"] {
            let load = try #require(loads[name], "\(loads)")
            #expect(load["sizes"] as? [[Int]] == expected, "\(name): \(load)")
        }
        #expect(loads["first"]?["ok"] as? Int == 2, "\(loads)")
        #expect(loads["second"]?["ok"] as? Int == 0 && loads["reload"]?["ok"] as? Int == 0, "from the cache or 304, never the bytes again: \(loads)")
        #expect(loads["second"]?["notModified"] as? Int == 0, "immutable: not even revalidated on a second visit: \(loads)")
        print("browser: \(loads.mapValues { "200 × \($0["ok"] ?? "?"), 304 × \($0["notModified"] ?? "?")" })")
    }
}
