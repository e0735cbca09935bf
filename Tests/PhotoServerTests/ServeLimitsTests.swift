import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
@testable import PhotoServer
import Testing
import TestSupport

/// The abuse limits' parts on their own: token buckets, address ranges, the client address behind proxies.
@Suite struct AbuseLimitParts {
    @Test func aBucketHoldsAMinutesWorthAndRefillsAtTheRate() {
        var buckets = TokenBuckets(RateLimit(perMinute: 6))
        let start = ContinuousClock.now
        for _ in 0..<6 { #expect(buckets.take("a", now: start) == .allowed) }
        // Empty: one token every 10 s.
        #expect(buckets.take("a", now: start) == .refused(retryAfter: 10))
        #expect(buckets.take("a", now: start + .seconds(4)) == .refused(retryAfter: 6))
        #expect(buckets.take("b", now: start) == .allowed, "another client has its own bucket")
        #expect(buckets.take("a", now: start + .seconds(10)) == .allowed)
        #expect(buckets.take("a", now: start + .seconds(10)) == .refused(retryAfter: 10))
        // A minute later the bucket is full again, and holds no more than full.
        for _ in 0..<6 { #expect(buckets.take("a", now: start + .seconds(600)) == .allowed) }
        #expect(buckets.take("a", now: start + .seconds(600)) != .allowed)
        var unlimited = TokenBuckets(RateLimit(perMinute: 0))
        for _ in 0..<1000 { #expect(unlimited.take("a", now: start) == .allowed) }
        #expect(unlimited.count == 0)
    }

    @Test func fullBucketsAreForgottenWhenThereAreMany() {
        var buckets = TokenBuckets(RateLimit(perMinute: 60), tidyAbove: 100)
        let start = ContinuousClock.now
        for n in 0..<100 { _ = buckets.take("scan-\(n)", now: start) }
        #expect(buckets.count == 100)
        // A minute on, every bucket is full again: the 101st client makes room.
        _ = buckets.take("late", now: start + .seconds(61))
        #expect(buckets.count == 1)
        // Buckets still draining are kept.
        for n in 0..<100 { _ = buckets.take("busy-\(n)", now: start + .seconds(61)) }
        _ = buckets.take("later", now: start + .milliseconds(61_500))
        #expect(buckets.count == 102)
    }

    @Test func addressRanges() throws {
        let ten = try #require(AddressRange("10.0.0.0/8"))
        #expect(ten.contains("10.1.2.3"))
        #expect(ten.contains("::ffff:10.1.2.3"), "IPv4-mapped IPv6")
        #expect(!ten.contains("11.0.0.1"))
        #expect(!ten.contains("not an address"))
        let one = try #require(AddressRange("192.168.1.7"))
        #expect(one.contains("192.168.1.7") && !one.contains("192.168.1.8"))
        let six = try #require(AddressRange("2001:db8::/32"))
        #expect(six.contains("2001:db8:1::5") && !six.contains("2001:db9::5") && !six.contains("10.0.0.1"))
        let odd = try #require(AddressRange("172.16.0.0/12"))
        #expect(odd.contains("172.31.255.255") && !odd.contains("172.32.0.0"))
        for bad in ["", "10.0.0.0/33", "10.0.0.0/-1", "::/129", "example.com", "10.0.0/8"] { #expect(AddressRange(bad) == nil, "\(bad)") }
    }

    @Test func theClientAddressBehindTrustedProxies() throws {
        func address(_ forwarded: [String], peer: String?, trusting proxies: [String]) -> String? {
            let limits = AbuseLimits(
                perUser: .init(perMinute: 1), perAddress: .init(perMinute: 1), trustedProxies: proxies.compactMap(AddressRange.init), metrics: ServerMetrics())
            var fields = HTTPFields()
            for value in forwarded { fields.append(HTTPField(name: AbuseLimits.forwardedFor, value: value)) }
            let request = Request(head: HTTPRequest(method: .post, scheme: "http", authority: "x", path: "/files", headerFields: fields), body: .init(buffer: ByteBuffer()))
            return limits.clientAddress(request, peer: peer)
        }
        // Untrusted peers are the client, whatever they forward.
        #expect(address(["203.0.113.9"], peer: "198.51.100.1", trusting: []) == "198.51.100.1")
        #expect(address(["203.0.113.9"], peer: "198.51.100.1", trusting: ["10.0.0.0/8"]) == "198.51.100.1")
        // A trusted proxy's last hop is the client; a client's own claim to the left is not believed.
        #expect(address(["1.2.3.4, 203.0.113.9"], peer: "10.0.0.2", trusting: ["10.0.0.0/8"]) == "203.0.113.9")
        // Two trusted proxies in a row: walked back to the first untrusted address.
        #expect(address(["1.2.3.4, 203.0.113.9, 10.0.0.7"], peer: "10.0.0.2", trusting: ["10.0.0.0/8"]) == "203.0.113.9")
        #expect(address(["203.0.113.9", "10.0.0.7"], peer: "10.0.0.2", trusting: ["10.0.0.0/8"]) == "203.0.113.9", "several header lines")
        // Garbage stops the walk at the last address believed.
        #expect(address(["<script>"], peer: "10.0.0.2", trusting: ["10.0.0.0/8"]) == "10.0.0.2")
        #expect(address([], peer: nil, trusting: ["10.0.0.0/8"]) == nil)
    }
}

/// The limits on a running server: writes per user and per address (429 with `Retry-After`, which the
/// project's own uploader waits for), the pixel cap, and the bounded queue of photos to prepare.
@Suite(.serialized) struct ServeLimitsTests {
    static func rateRefusals(_ server: PhotoServerProcess) async throws -> Int {
        let metrics = try await HTTPExchange.send("GET", "\(server.base)/metrics")
        let line = metrics.body.split(separator: "\n").first { $0.hasPrefix("photoprep_rule_refusals_total{reason=\"rate\"}") }
        return line.flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
    }

    /// Three writes a minute: a token every 20 s. Under the test suite's own load a request can take seconds,
    /// so every expectation is stated against the clock: creations allowed are 3 plus one per 20 s they took; a
    /// write must be refused when its answer came before the bucket could hold a token again.
    @Test func writesPastAUsersRateAre429AndTheUploaderWaitsAsTold() async throws {
        let seeded = try await SeededServer.start(arguments: ["--writes-per-user", "3"])
        let u1 = TestTokens.hs256(sub: "u1")
        let jpeg = try Fixture.bytes("photos/ladybird-2560x1600.jpg")
        let started = Date()
        var allowed = 0
        var refused: (answer: HTTPExchange, sent: Date)?
        while refused == nil && allowed < 20 {
            let sent = Date()
            let created = try await ServeRulesTests.create(seeded.server, key: "user_photos/u1/a/\(allowed).jpg", length: jpeg.count, token: u1)
            guard created.status == 201 else {
                refused = (created, sent)
                break
            }
            allowed += 1
            // Deleting is not a write the limit counts.
            let deleted = try await HTTPExchange.send(
                "DELETE", try #require(created.header("Location")), headers: ["Tus-Resumable": "1.0.0", "Authorization": "Bearer \(u1)"])
            #expect(deleted.status == 204)
        }
        let refills = Int(Date().timeIntervalSince(started) / 20) + 1
        #expect(allowed >= 3 && allowed <= 3 + refills, "\(allowed) creations passed in \(Date().timeIntervalSince(started)) s")
        let (refusal, refusedSent) = try #require(refused, "never refused")
        #expect(refusal.status == 429)
        let wait = try #require(refusal.header("Retry-After").flatMap { Int($0) })
        #expect((1...20).contains(wait), "3 a minute: a token every 20 s")
        #expect(refusal.body.contains("too many writes by u1"))
        // No token before this: the refusal came at or after `refusedSent`, and its Retry-After is rounded up.
        let emptyUntil = refusedSent.addingTimeInterval(Double(wait) - 1)
        // Another user is not limited by u1's writes; the API's writes count for u1 too.
        let u2 = try await ServeRulesTests.create(seeded.server, key: "user_photos/u2/a/1.jpg", length: jpeg.count, token: TestTokens.hs256(sub: "u2"))
        #expect(u2.status == 201)
        let rename = try await HTTPExchange.send(
            "PATCH", "\(seeded.server.base)/v1/groups/\(seeded.groupId)", headers: ["Authorization": "Bearer \(u1)", "Content-Type": "application/json"],
            body: Array(#"{"name":"Renamed"}"#.utf8))
        if Date() < emptyUntil { #expect(rename.status == 429, "answered while the bucket was still empty") }
        let before = try await Self.rateRefusals(seeded.server)
        #expect(before == (rename.status == 429 ? 2 : 1))

        // The project's uploader, started while the bucket is empty, is refused once, waits what the server said
        // and then succeeds. A client that ignored Retry-After — backing off 0.2, 0.4, 0.8, 1.6, 3.2 s … — would
        // be refused again and again within a 20 s wait; this one at most once.
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("limits-\(UUID().uuidString).jpg")
        try Data(jpeg).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let upload = try await onThread {
            try photoprepBlocking(["upload", file.path, "--to", seeded.server.endpoint, "--key-prefix", "profile_images/u1/", "--token", u1, "-q"])
        }
        #expect(upload.status == 0, "\(upload.stdout)\(upload.stderr)")
        #expect(try await Self.rateRefusals(seeded.server) - before <= 1)
        #expect(seeded.server.stored("profile_images/u1/\(file.lastPathComponent)") != nil)
        if Date() < emptyUntil { Issue.record("the upload finished before the bucket held a token again: it did not wait") }
    }

    @Test func writesPastAnAddressRateAre429BehindATrustedProxy() async throws {
        // One write a minute per address: far longer than the test takes, however loaded the machine.
        let seeded = try await SeededServer.start(arguments: ["--writes-per-address", "1", "--trust-proxy", "127.0.0.1"])
        func create(from client: String?, as user: String) async throws -> HTTPExchange {
            try await ServeRulesTests.create(
                seeded.server, key: "user_photos/\(user)/a/x.jpg", length: 1000, token: TestTokens.hs256(sub: user),
                extra: client.map { ["X-Forwarded-For": $0] } ?? [:])
        }
        // Users behind one address share its bucket.
        let first = ContinuousClock.now
        #expect(try await create(from: "203.0.113.5", as: "u1").status == 201)
        let refused = try await create(from: "203.0.113.5", as: "u2")
        let elapsed = Int((ContinuousClock.now - first).components.seconds)
        #expect(refused.status == 429)
        // The token is back a minute after the first write, less the time the two took (seconds, rounded up).
        #expect((60 - elapsed - 1...60).contains(refused.header("Retry-After").flatMap { Int($0) } ?? 0), "\(refused.header("Retry-After") ?? "none")")
        #expect(refused.body.contains("too many writes from 203.0.113.5"))
        #expect(try await create(from: "203.0.113.6", as: "u1").status == 201, "another address has its own bucket")
        #expect(try await create(from: nil, as: "u1").status == 201, "the proxy's own address too")
    }

    /// A photo whose header declares 16383 × 16383 pixels (268 MP, the old cap, 6 s of CPU as a PNG) is
    /// refused from its header, naming its size; nothing is stored.
    @Test func aPhotoDeclaringTooManyPixelsIs422() async throws {
        try await SeededRouter.run { seeded in
            let u1 = TestTokens.hs256(sub: "u1")
            let jpeg = Self.declaring(try Fixture.bytes("photos/ladybird-2560x1600.jpg"), width: 16383, height: 16383)
            let created = try await ServeRulesTests.create(seeded, key: "profile_images/u1/huge.jpg", length: jpeg.count, token: u1)
            let sent = try await ServeRulesTests.patch(seeded, try #require(created.header("Location")), offset: 0, body: jpeg, token: u1)
            #expect(sent.status == 422)
            #expect(sent.body.contains("16383 × 16383 = 268402689 pixels is over the limit of 210000000 pixels"), "\(sent.body)")
            #expect(seeded.stored("profile_images/u1/huge.jpg") == nil)
            // The largest a PNG may declare: its pixels overflowed `Int` in that message, and the trap stopped the server.
            let png = TestPNG.declaring(width: 0x7FFF_FFFF, height: 0x7FFF_FFFF)
            let pngCreated = try await ServeRulesTests.create(seeded, key: "profile_images/u1/huge.png", length: png.count, token: u1)
            let pngSent = try await ServeRulesTests.patch(seeded, try #require(pngCreated.header("Location")), offset: 0, body: png, token: u1)
            #expect(pngSent.status == 422 && pngSent.body.contains("2147483647 × 2147483647 = 4611686014132420609 pixels"), "\(pngSent.body)")
            let after = try await ServeRulesTests.create(seeded, key: "profile_images/u1/next.jpg", length: jpeg.count, token: u1)
            #expect(after.status == 201, "the server still answers")
        }
    }

    /// With one pipeline thread and no room to wait, photos finishing beside the one being prepared get 503 with `Retry-After`
    /// and keep every byte; asking again (HEAD) finishes each of them.
    @Test func finishingsPastTheQueueAre503AndKeepTheirBytes() async throws {
        let seeded = try await SeededServer.start(arguments: ["--pipeline-threads", "1", "--max-waiting-photos", "0"])
        let u1 = TestTokens.hs256(sub: "u1")
        let photo = try [UInt8](Data(contentsOf: URL(fileURLWithPath: try await onThread { BigPhotos.twentyMP })))
        let count = 8
        var locations: [String] = []
        for n in 0..<count {
            let created = try await ServeRulesTests.create(seeded.server, key: "user_photos/u1/queue/\(n).jpg", length: photo.count, token: u1)
            locations.append(try #require(created.header("Location")))
        }
        let answers = try await withThrowingTaskGroup(of: (Int, HTTPExchange).self) { group in
            for (n, location) in locations.enumerated() { group.addTask { (n, try await ServeRulesTests.patch(location, offset: 0, body: photo, token: u1)) } }
            return try await group.reduce(into: [Int: HTTPExchange]()) { $0[$1.0] = $1.1 }
        }
        let statuses = answers.sorted { $0.key < $1.key }.map(\.value.status)
        let busy = answers.filter { $0.value.status == 503 }
        #expect(statuses.allSatisfy { [204, 503].contains($0) }, "\(statuses)")
        #expect(!busy.isEmpty && busy.count <= count - 1, "one photo prepared at a time, none waiting: \(statuses)")
        for (n, refused) in busy {
            #expect(refused.header("Retry-After") == "5")
            #expect(refused.body.contains("being prepared or waiting for it"), "\(refused.body)")
            #expect(seeded.server.receivedBytes(locations[n]) == photo.count, "every byte kept")
        }
        // Asking again finishes each photo that was refused.
        for (n, _) in busy {
            let deadline = Date().addingTimeInterval(60)
            var asked = try await ServeRulesTests.head(locations[n], token: u1)
            while asked.status == 503 && Date() < deadline {
                try await Task.sleep(for: .milliseconds(500))
                asked = try await ServeRulesTests.head(locations[n], token: u1)
            }
            #expect(asked.status == 200 && asked.header("Upload-Offset") == String(photo.count), "\(asked.status) \(asked.body)")
        }
        for n in 0..<count { #expect(seeded.server.stored("user_photos/u1/queue/\(n).jpg") != nil, "photo \(n)") }
    }

    /// `jpeg` with its frame header claiming `width` × `height`.
    static func declaring(_ jpeg: [UInt8], width: Int, height: Int) -> [UInt8] {
        var data = jpeg
        var i = 2
        while i + 9 < data.count {
            let marker = data[i + 1], length = Int(data[i + 2]) << 8 | Int(data[i + 3])
            if [0xC0, 0xC1, 0xC2].contains(marker) {
                data.replaceSubrange((i + 5)...(i + 8), with: [UInt8(height >> 8), UInt8(height & 0xFF), UInt8(width >> 8), UInt8(width & 0xFF)])
                return data
            }
            i += 2 + length
        }
        return data
    }
}

/// Connections that would hold the server: bodies that cannot fit, bodies that trickle.
@Suite(.serialized) struct ServeConnectionTests {
    /// A `PATCH` declaring 1 GB for an upload with 1,000 bytes left is refused (413, `Connection: close`)
    /// before any of its body is read, and the connection ends: the client cannot push its gigabyte.
    @Test func aBodyThatCannotFitIsRefusedUnreadAndTheConnectionEnds() async throws {
        let seeded = try await SeededServer.start()
        let u1 = TestTokens.hs256(sub: "u1")
        let created = try await ServeRulesTests.create(seeded.server, key: "profile_images/u1/small.jpg", length: 1000, token: u1)
        let location = try #require(created.header("Location"))
        let connection = try ServeRulesTests.patchHead(seeded.server, location, declaring: 1_000_000_000, token: u1)
        let answer = try await connection.receive(timeout: 10)
        #expect(answer.hasPrefix("HTTP/1.1 413"), "\(answer)")
        #expect(answer.lowercased().contains("connection: close"))
        #expect(answer.contains("the body's 1000000000 bytes do not fit: 1000 of the upload's 1000 are left"))
        // What the client pushes now goes nowhere: the connection is closed after at most what the
        // sockets' buffers hold (a server reading it to the end would take all 256 MiB).
        let pushed = try await connection.sendUntilClosed(total: 256 << 20)
        #expect(pushed < 32 << 20, "the server took \(pushed) bytes of a refused body")
        #expect(seeded.server.receivedBytes(location) == 0)
    }

    /// A refusal before the body is read (here 401) ends the connection too when much body was declared;
    /// a small one is read and the connection kept.
    @Test func aRefusalWithALargeUnreadBodyEndsTheConnection() async throws {
        let seeded = try await SeededServer.start()
        let connection = try RawConnection(port: seeded.server.port)
        try connection.send(
            "PATCH /files/nope HTTP/1.1\r\nHost: 127.0.0.1\r\nTus-Resumable: 1.0.0\r\nUpload-Offset: 0\r\n"
                + "Content-Type: application/offset+octet-stream\r\nContent-Length: 500000000\r\n\r\n")
        let answer = try await connection.receive(timeout: 10)
        #expect(answer.hasPrefix("HTTP/1.1 401"), "\(answer)")
        #expect(answer.lowercased().contains("connection: close"))
        #expect(try await connection.sendUntilClosed(total: 256 << 20) < 32 << 20)

        let kept = try RawConnection(port: seeded.server.port)
        try kept.send("PATCH /files/nope HTTP/1.1\r\nHost: 127.0.0.1\r\nTus-Resumable: 1.0.0\r\nContent-Length: 10\r\n\r\n0123456789")
        let first = try await kept.receive(timeout: 10)
        #expect(first.hasPrefix("HTTP/1.1 401") && !first.lowercased().contains("connection: close"), "\(first)")
        try kept.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(try await kept.receive(timeout: 10).hasPrefix("HTTP/1.1 200"), "the connection still serves")
    }

    /// Connections held open from 127.0.0.1 with `--max-connections-per-address 4`: the one past the cap is
    /// closed as soon as it is accepted, without an answer (the test process's own HTTP client may hold an
    /// idle one of the four); once a held one ends, a new one is served.
    @Test func connectionsPastTheCapPerAddressAreClosed() async throws {
        let seeded = try await SeededServer.start(arguments: ["--max-connections-per-address", "4"])
        var held: [RawConnection] = []
        var refused = false
        for _ in 0..<8 {
            // Each answered once (so the server holds it), then kept open.
            let connection = try RawConnection(port: seeded.server.port)
            try? connection.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            // A refused connection is closed at once; 20 s so that a slow answer is not taken for a refusal.
            let answer = try await connection.receive(timeout: 20)
            guard answer.hasPrefix("HTTP/1.1 200") else {
                #expect(answer == "", "closed without an answer: \(answer)")
                refused = true
                break
            }
            held.append(connection)
        }
        #expect(refused, "never refused")
        #expect((2...4).contains(held.count), "held \(held.count)")
        let again = try RawConnection(port: seeded.server.port)
        try? again.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(try await again.receive(timeout: 5) == "", "still full")
        // Counted: asked on a connection the server holds.
        try held[0].send("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(try await held[0].receive(timeout: 5).contains("photoprep_rule_refusals_total{reason=\"connections\"} 2"))
        held.removeLast()  // closes it
        // Room again once the server has seen the close (asked until then: under load that can take a while).
        var answer = ""
        let deadline = Date().addingTimeInterval(20)
        repeat {
            let next = try RawConnection(port: seeded.server.port)
            try? next.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            answer = try await next.receive(timeout: 5)
            if !answer.hasPrefix("HTTP/1.1 200") { try await Task.sleep(for: .milliseconds(100)) }
        } while !answer.hasPrefix("HTTP/1.1 200") && Date() < deadline
        #expect(answer.hasPrefix("HTTP/1.1 200"), "room again: \(answer)")
    }

    /// Headers that never end are cut at the idle timeout however many bytes trickle in (a byte every 300 ms
    /// here, 6 s timeout), while a connection that sends a request every 300 ms is kept.
    @Test func headersThatNeverEndAreCut() async throws {
        let seeded = try await SeededServer.start(arguments: ["--idle-timeout", "6"])
        let started = Date()  // before the server can start the connection's clock
        let loris = try RawConnection(port: seeded.server.port)
        let kept = try RawConnection(port: seeded.server.port)
        let header = Array("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: ".utf8) + [UInt8](repeating: UInt8(ascii: "a"), count: 200)
        var cut: Double?
        var n = 0
        while cut == nil && Date().timeIntervalSince(started) < 30 {
            try? loris.send([header[n % header.count]])
            n += 1
            try kept.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            #expect(try await kept.receive(timeout: 5).hasPrefix("HTTP/1.1 200"))
            try await Task.sleep(for: .milliseconds(300))
            if loris.peerClosed { cut = Date().timeIntervalSince(started) }
        }
        let after = try #require(cut, "the connection was never cut")
        #expect(after >= 5.5 && after < 25, "cut after \(after) s")
    }

    /// A body other than an upload's, trickled a byte every 300 ms (each byte resets the idle clock), is cut when
    /// its request has not arrived whole within the idle timeout (3 s here) — to the download path and to the API
    /// alike — while a request sent whole on a connection is answered.
    @Test func aTricklingBodyOfAnotherRequestIsCutAtTheIdleTimeout() async throws {
        let seeded = try await SeededServer.start(arguments: ["--idle-timeout", "3"])
        for target in ["GET /media/profile_images/u1/a.jpg?v=0&token=0", "PATCH /v1/me"] {
            let started = Date()
            let trickle = try RawConnection(port: seeded.server.port)
            try trickle.send("\(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n")
            var cut: Double?
            while cut == nil && Date().timeIntervalSince(started) < 30 {
                try? trickle.send(" ")
                // An answer may come before the body's end (a 404 needs no body): read past it to see the close.
                _ = try await trickle.receive(timeout: 0.3)
                if trickle.peerClosed { cut = Date().timeIntervalSince(started) }
            }
            let after = try #require(cut, "\(target): the connection was never cut")
            #expect(after >= 2.5 && after < 20, "\(target): cut after \(after) s")
        }
        let whole = try RawConnection(port: seeded.server.port)
        try whole.send("PATCH /v1/me HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
        #expect(try await whole.receive(timeout: 5).hasPrefix("HTTP/1.1 401"))
    }

    /// A client trickling a byte a second is cut once its grace has passed (408, what arrived kept), while
    /// a photo sent at 50 KB/s through a throttling proxy completes.
    @Test func aTricklingBodyIsCutWhileASlowUploadCompletes() async throws {
        let seeded = try await SeededServer.start(arguments: ["--body-grace", "3"])
        let u1 = TestTokens.hs256(sub: "u1")
        let jpeg = try Fixture.bytes("photos/ladybird-2560x1600.jpg")
        let proxy = try FaultProxy(upstream: seeded.server.port, faults: ["--throttle", "50000"])
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("slow-\(UUID().uuidString).jpg")
        try Data(jpeg).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let slowUpload = try BackgroundCommand([
            "upload", file.path, "--to", proxy.endpoint, "--key-prefix", "profile_images/u1/", "--token", u1, "--chunk-size", "4MiB", "-q",
        ])

        let created = try await ServeRulesTests.create(seeded.server, key: "profile_images/u1/trickle.jpg", length: jpeg.count, token: u1)
        let location = try #require(created.header("Location"))
        let started = Date()  // before the server can start the body's clock
        let trickle = try ServeRulesTests.patchHead(seeded.server, location, declaring: jpeg.count, token: u1)
        var sent = 0
        var answer = ""
        while answer.isEmpty && Date().timeIntervalSince(started) < 30 {
            try? trickle.send([jpeg[sent]])
            sent += 1
            answer = try await trickle.receive(timeout: 1)
        }
        let cutAfter = Date().timeIntervalSince(started)
        #expect(answer.hasPrefix("HTTP/1.1 408"), "\(answer)")
        #expect(answer.contains("slower than 500 bytes a second"))
        #expect(cutAfter >= 2.5 && cutAfter < 20, "cut after \(cutAfter) s")
        // What arrived is kept for a resume (the last byte may have been on its way when the cut came).
        #expect((sent - 1...sent).contains(seeded.server.receivedBytes(location) ?? -1), "kept \(seeded.server.receivedBytes(location) ?? -1) of \(sent)")

        let result = try #require(await slowUpload.wait(timeout: 120), "the 50 KB/s upload did not finish")
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(seeded.server.stored("profile_images/u1/\(file.lastPathComponent)") != nil)
    }
}
