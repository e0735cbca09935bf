import Foundation
import PhotoServices
import PhotoUpload
import SQLKit
import Testing
import TestSupport

/// Two `photoprep serve` processes on one PostgreSQL database and one S3 bucket (moto), as behind a load
/// balancer: uploads in progress live in the database and the bucket, so an upload begun through one
/// instance continues through the other, and an instance that dies mid-upload or mid-finish loses nothing.
@Suite(.serialized) struct ServeSharedUploadsTests {
    struct Instances {
        let moto: MotoServer
        let database: AppDatabase
        let a: PhotoServerProcess
        let b: PhotoServerProcess
        let objects: S3Objects

        /// Keys of stored photos (not the pieces of uploads in progress).
        func photoKeys() async throws -> [String] {
            try await objects.list(prefix: "").filter { !$0.hasPrefix("partial-uploads/") && !$0.hasPrefix("thumbnails/") }.sorted()
        }
        func thumbnailKeys() async throws -> [String] { try await objects.list(prefix: "thumbnails/").sorted() }
        func pieceKeys() async throws -> [String] { try await objects.list(prefix: "partial-uploads/") }

        /// The instance the client's connection through `balancer` reaches (the one with a connection open), and the other.
        func receivingAndOther(through balancer: Balancer) -> (receiving: PhotoServerProcess, other: PhotoServerProcess) {
            balancer.open[a.port] ?? 0 > 0 ? (a, b) : (b, a)
        }
    }

    struct FinishRun: Decodable, Sendable {
        var upload: String
        var runner: String
        var startedAt: Date
        var endedAt: Date?
        var outcome: String?
    }

    /// Finishing leases of 2 s (`--job-lease`), so that a takeover happens within the test.
    /// Two instances on one database and one bucket; `s3Faults`: they reach the bucket through a `FaultProxy` with these
    /// (only A with `onlyA`; B then reaches the bucket directly).
    static func start(s3Faults: [String]? = nil, onlyA: Bool = false) async throws -> (Instances, FaultProxy?) {
        let moto = try await onThread { try MotoServer() }
        try await moto.createBucket("photos")
        let url = try await PostgresCluster.shared().newDatabase()
        let database = try await AppDatabase(postgres: url, role: .server)
        let arguments = ["--database", url, "--to", "s3://photos/prod", "--job-lease", "2"]
        let proxy = try s3Faults.map { faults in try FaultProxy(upstream: moto.server.port, faults: faults) }
        let environment = moto.environment(endpoint: proxy.map { "http://127.0.0.1:\($0.server.port)" })
        let direct = onlyA ? moto.environment() : environment
        let (a, b) = try await onThread {
            (try PhotoServerProcess(arguments: arguments, environment: environment), try PhotoServerProcess(arguments: arguments, environment: direct))
        }
        let objects = S3Objects(store: try S3Store(url: "s3://photos/prod", environment: moto.environment()))
        return (Instances(moto: moto, database: database, a: a, b: b, objects: objects), proxy)
    }

    static func start() async throws -> Instances { try await start(s3Faults: nil).0 }

    static func tus(_ token: String, _ more: [String: String] = [:]) -> [String: String] {
        ["Tus-Resumable": "1.0.0", "Authorization": "Bearer \(token)"].merging(more) { $1 }
    }

    /// A tus creation of an upload of `length` bytes for `key` at `endpoint`, and its id (nil when it was refused).
    static func create(_ endpoint: String, key: String, length: Int, token: String) async throws -> (answer: HTTPExchange, id: String?) {
        let created = try await HTTPExchange.send(
            "POST", endpoint, headers: tus(token, ["Upload-Length": String(length), "Upload-Metadata": "key \(Data(key.utf8).base64EncodedString())"]))
        return (created, created.header("Location")?.split(separator: "/").last.map(String.init))
    }

    /// Created and half sent through A, asked about and finished through B: one stored photo, one
    /// recorded album photo, no pieces left; a PATCH at a stale offset through A is a 409 with the true offset.
    @Test func anUploadBegunOnOneInstanceContinuesOnTheOther() async throws {
        let two = try await Self.start()
        defer { two.a.stop(); two.b.stop() }
        let u1 = TestTokens.hs256(sub: "u1", claims: ["name": "Ana"])
        let photo = try Fixture.bytes("photos/storm-1920x1280.jpg")
        let key = "user_photos/u1/trip/storm.jpg"
        let (created, location) = try await Self.create(two.a.endpoint, key: key, length: photo.count, token: u1)
        #expect(created.status == 201, "\(created.body)")
        let id = try #require(location)
        let half = photo.count / 2
        let first = try await HTTPExchange.send(
            "PATCH", two.a.endpoint + id, headers: Self.tus(u1, ["Upload-Offset": "0", "Content-Type": "application/offset+octet-stream"]),
            body: Array(photo[..<half]))
        #expect(first.status == 204 && first.header("Upload-Offset") == String(half), "\(first.status) \(first.body)")

        let head = try await HTTPExchange.send("HEAD", two.b.endpoint + id, headers: Self.tus(u1))
        #expect(head.status == 200 && head.header("Upload-Offset") == String(half) && head.header("Upload-Length") == String(photo.count))
        // Another user does not see it on either instance.
        #expect(try await HTTPExchange.send("HEAD", two.b.endpoint + id, headers: Self.tus(TestTokens.hs256(sub: "u2"))).status == 404)
        let stale = try await HTTPExchange.send(
            "PATCH", two.a.endpoint + id, headers: Self.tus(u1, ["Upload-Offset": "0", "Content-Type": "application/offset+octet-stream"]),
            body: Array(photo[..<10]))
        #expect(stale.status == 409 && stale.header("Upload-Offset") == String(half))

        let rest = try await HTTPExchange.send(
            "PATCH", two.b.endpoint + id, headers: Self.tus(u1, ["Upload-Offset": String(half), "Content-Type": "application/offset+octet-stream"]),
            body: Array(photo[half...]))
        #expect(rest.status == 204 && rest.header("Upload-Offset") == String(photo.count), "\(rest.status) \(rest.body)")
        // Asked again through A: finished, all bytes.
        #expect(try await HTTPExchange.send("HEAD", two.a.endpoint + id, headers: Self.tus(u1)).header("Upload-Offset") == String(photo.count))

        #expect(try await two.photoKeys() == [key])
        let thumbnails = try await two.thumbnailKeys()
        #expect(thumbnails.filter { !$0.hasPrefix("thumbnails/webp/") } == ["thumbnails/512/\(key)"], "an album photo's grid thumbnail")
        #expect(thumbnails.allSatisfy { $0 == "thumbnails/512/\(key)" || $0 == "thumbnails/webp/512/\(key).webp" }, "and its WebP, if one was worth it: \(thumbnails)")
        let stored = try #require(try await two.objects.get(key))
        #expect(stored.starts(with: [0xFF, 0xD8]) && stored.count <= photo.count)
        #expect(try await two.pieceKeys().isEmpty)
        #expect(try await two.database.count("albumPhoto", where: "key", key) == 1)
        #expect(try await two.database.one(User.self, from: "user", id: "u1")?.displayName == "Ana")
        let runs = try await two.database.all(FinishRun.self, from: "tusUploadFinish", where: "upload", id, orderBy: "id")
        #expect(runs.map(\.outcome) == ["done"])
    }

    /// Pieces that vanish from the bucket (a bucket lost and made again) are never claimed: asked its offset, the
    /// upload ends with 410 (start over, as tus says) instead of an offset the server cannot deliver; one whose last
    /// bytes arrive after its first piece vanished ends with 410 too, not 503 for ever. A new upload then works.
    @Test func piecesGoneFromTheBucketEndTheUpload() async throws {
        let two = try await Self.start()
        defer { two.a.stop(); two.b.stop() }
        let u1 = TestTokens.hs256(sub: "u1", claims: ["name": "Ana"])
        let photo = try Fixture.bytes("photos/storm-1920x1280.jpg")
        let key = "user_photos/u1/trip/storm.jpg"
        let half = photo.count / 2
        func halfSent() async throws -> String {
            let (created, location) = try await Self.create(two.a.endpoint, key: key, length: photo.count, token: u1)
            let id = try #require(location, "\(created)")
            let first = try await HTTPExchange.send(
                "PATCH", two.a.endpoint + id, headers: Self.tus(u1, ["Upload-Offset": "0", "Content-Type": "application/offset+octet-stream"]),
                body: Array(photo[..<half]))
            #expect(first.status == 204, "\(first)")
            for piece in try await two.pieceKeys() { try await two.objects.delete(piece) }
            return id
        }
        func recorded(_ id: String) async throws -> Int {
            try await two.database.rows("SELECT count(*) AS n FROM \"tusUpload\" WHERE id = \(bind: id)").first?.decode(column: "n", as: Int.self) ?? -1
        }

        let asked = try await halfSent()
        let head = try await HTTPExchange.send("HEAD", two.b.endpoint + asked, headers: Self.tus(u1))
        #expect(head.status == 410 && head.header("Upload-Offset") == nil, "\(head)")
        #expect(try await recorded(asked) == 0, "the upload is ended")
        #expect(try await HTTPExchange.send("HEAD", two.a.endpoint + asked, headers: Self.tus(u1)).status == 404, "and stays gone")

        let finished = try await halfSent()
        let last = try await HTTPExchange.send(
            "PATCH", two.b.endpoint + finished, headers: Self.tus(u1, ["Upload-Offset": String(half), "Content-Type": "application/offset+octet-stream"]),
            body: Array(photo[half...]))
        #expect(last.status == 410, "\(last)")
        #expect(try await recorded(finished) == 0)
        #expect(try await two.photoKeys().isEmpty)
        #expect(two.b.log.contains("gone from its store"))

        // Started over: stored.
        let again = try await HTTPExchange.send(
            "POST", two.b.endpoint,
            headers: Self.tus(u1, [
                "Upload-Length": String(photo.count), "Upload-Metadata": "key \(Data(key.utf8).base64EncodedString())",
                "Content-Type": "application/offset+octet-stream",
            ]), body: photo)
        #expect(again.status == 201 && again.header("Upload-Offset") == String(photo.count), "\(again)")
        #expect(try await two.photoKeys() == [key])
    }

    /// 40 uploads at once with tuspy (a new connection for every request) through a round-robin
    /// balancer: each upload's requests alternate between the instances. Every upload is stored once
    /// and recorded once, finished once, and nothing partial is left in the bucket.
    @Test func fortyUploadsThroughARoundRobinBalancer() async throws {
        let two = try await Self.start()
        defer { two.a.stop(); two.b.stop() }
        let balancer = try await onThread { try Balancer(backends: [two.a.port, two.b.port]) }
        let files = [Fixture.path("photos/storm-1920x1280.jpg"), Fixture.path("photos/ladybird-2560x1600.jpg")]
        let run = try await runSupportScript(
            "load_uploads.py", [balancer.endpoint] + files + ["--count", "40", "--chunk-size", "262144"],
            environment: ["PHOTOPREP_JWT_SECRET": TestTokens.secret])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run.stdout) \(run.stderr)")
        #expect(report["ok"] as? Int == 40, "\(report["failed"] ?? "") \(two.a.log.suffix(2000)) \(two.b.log.suffix(2000))")

        // Both instances took requests; every upload took several (a POST and 2–3 PATCHes).
        let connections = balancer.connections
        #expect((connections[two.a.port] ?? 0) >= 40 && (connections[two.b.port] ?? 0) >= 40, "\(connections)")

        let keys = try await two.photoKeys()
        #expect(keys.count == 40)
        #expect(keys.filter { $0.hasPrefix("profile_images/") }.count == 20 && keys.filter { $0.hasPrefix("user_photos/") }.count == 20)
        #expect(try await two.pieceKeys().isEmpty)
        #expect(try await two.database.count("albumPhoto") == 20)
        let profiles = try await two.database.rows("SELECT count(*) AS n FROM \"user\" WHERE \"profilePhotoKey\" IS NOT NULL")
        #expect(try profiles.first?.decode(column: "n", as: Int.self) == 20)
        #expect(try await two.database.count("tusUpload", where: "state", "stored") == 40)
        // One finishing per upload, done.
        let runs = try await two.database.all(FinishRun.self, from: "tusUploadFinish", orderBy: "id")
        #expect(runs.count == 40 && Set(runs.map(\.upload)).count == 40 && runs.allSatisfy { $0.outcome == "done" })
    }

    /// A large upload through a balancer that holds the client's bytes back after 6 MiB; the instance receiving
    /// it is killed (SIGKILL) once part of it is durable, while the rest is still the client's to send.
    /// `photoprep upload`'s retry reaches the other instance through the balancer, which answers from the
    /// shared state and takes the rest: it receives all the client had not sent, and less than the whole file.
    @Test func anInstanceKilledMidUploadIsContinuedByTheOther() async throws {
        let scratch = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let resume = scratch.appendingPathComponent("resume")
        let two = try await Self.start()
        defer { two.a.stop(); two.b.stop() }
        // The POST carries the first 4 MiB (creation-with-upload), the PATCH that follows 2 MiB more before the
        // balancer holds it: however slow the machine, the kill comes while the client has the rest to send.
        // (Killed during the POST, the client would never learn the upload's URL and would rightly start a new one.)
        let balancer = try await onThread { try Balancer(backends: [two.a.port, two.b.port], hold: (6 << 20, resume)) }
        let file = try await onThread { BigPhotos.twentyMPLarge }
        let size = try #require(try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int)
        let upload = try BackgroundCommand(
            ["upload", file, "--to", balancer.endpoint, "--key-prefix", "user_photos/u1/big/", "--state", scratch.appendingPathComponent("state").path,
             "--chunk-size", "4MiB", "--no-checksums"],
            environment: ["PHOTOPREP_TOKEN": TestTokens.hs256(sub: "u1")])

        // The balancer holding, and the PATCH's first MiB durable (a piece).
        var received: Int64 = 0, sent = 0
        let deadline = Date().addingTimeInterval(60)
        while received < 5 << 20 || sent < 6 << 20, Date() < deadline, upload.isRunning {
            try await Task.sleep(for: .milliseconds(20))
            received = try await two.database.rows("SELECT received FROM \"tusUpload\"").first?.decode(column: "received", as: Int64.self) ?? 0
            sent = balancer.bytesUp.values.reduce(0, +)
        }
        #expect(received >= 5 << 20 && sent < size, "\(received) durable, \(sent) sent of \(size)")
        #expect(balancer.open.values.filter { $0 > 0 }.count == 1, "connections open: \(balancer.open)")
        let (receiving, other) = two.receivingAndOther(through: balancer)
        let sentToOther = balancer.bytesUp[other.port] ?? 0
        receiving.kill()
        _ = FileManager.default.createFile(atPath: resume.path, contents: nil)

        let result = try #require(await upload.wait(timeout: 120), "the upload did not finish")
        #expect(result.status == 0, "\(result.stderr) \(other.log.suffix(2000))")
        #expect(try await two.photoKeys() == ["user_photos/u1/big/\(URL(fileURLWithPath: file).lastPathComponent)"])
        #expect(try await two.pieceKeys().isEmpty)
        // The balancer records the last bytes of a connection when it closes: wait for the client's to close.
        let closing = Date().addingTimeInterval(10)
        while balancer.open.values.contains(where: { $0 > 0 }), Date() < closing { try await Task.sleep(for: .milliseconds(20)) }
        // The survivor got the rest — at least what the client had not sent, never the whole file again.
        let survivorGot = (balancer.bytesUp[other.port] ?? 0) - sentToOther
        #expect(survivorGot >= size - sent && survivorGot < size - Int(received) + 64 * 1024,
                "\(survivorGot) bytes to the survivor, \(received) were durable, \(sent) sent before the kill")
        let runs = try await two.database.all(FinishRun.self, from: "tusUploadFinish", orderBy: "id")
        #expect(runs.map(\.outcome) == ["done"])
    }

    /// The instance that received an upload's last byte is killed while it finishes it (its finishing lease in
    /// the database): a proxy in front of S3 holds the photo's upload to its key until the instance is dead. The
    /// client's retry reaches the other instance, which is refused (423) while the lease runs, then takes the
    /// finishing over: the history shows the dead holding ended by expiry, then one that stored it, never two at once.
    @Test func anInstanceKilledWhileFinishingIsTakenOverAfterItsLease() async throws {
        let scratch = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let resume = scratch.appendingPathComponent("resume")
        let (two, proxy) = try await Self.start(s3Faults: ["--hold-path", "/user_photos/u1/big/", "--resume-file", resume.path])
        let s3 = try #require(proxy)
        defer { two.a.stop(); two.b.stop() }
        let balancer = try await onThread { try Balancer(backends: [two.a.port, two.b.port]) }
        let file = try await onThread { BigPhotos.twentyMPProgressive }
        let upload = try BackgroundCommand(
            ["upload", file, "--to", balancer.endpoint, "--key-prefix", "user_photos/u1/big/", "--state", scratch.appendingPathComponent("state").path],
            environment: ["PHOTOPREP_TOKEN": TestTokens.hs256(sub: "u1")])

        // The photo is prepared and on its way to its key: the instance finishing it holds the lease.
        let deadline = Date().addingTimeInterval(120)
        while s3.held == 0, Date() < deadline, upload.isRunning { try await Task.sleep(for: .milliseconds(20)) }
        if s3.held == 0, let ended = await upload.wait(timeout: 1) {  // say why: the upload ended first
            Issue.record("the upload ended (status \(ended.status)) before its photo was stored: \(ended.stdout.suffix(1000)) \(ended.stderr.suffix(1000))")
        }
        #expect(s3.held == 1)
        let holder = try await two.database.rows("SELECT \"finishOwner\" FROM \"tusUpload\"").first?.decode(column: "finishOwner", as: String?.self)
        let finishing = try #require(holder, "no instance holds the finishing while its photo is being stored")
        let (receiving, other) = two.receivingAndOther(through: balancer)
        receiving.kill()
        _ = FileManager.default.createFile(atPath: resume.path, contents: nil)

        let result = try #require(await upload.wait(timeout: 120), "the upload did not finish")
        #expect(result.status == 0, "\(result.stderr) \(other.log.suffix(2000))")
        #expect(try await two.photoKeys().count == 1)
        #expect(try await two.pieceKeys().isEmpty)
        let runs = try await two.database.all(FinishRun.self, from: "tusUploadFinish", orderBy: "id")
        #expect(runs.map(\.outcome) == ["lease expired", "done"], "\(runs)")
        #expect(runs.first?.runner == finishing && runs.last?.runner != finishing)
        if runs.count == 2 {
            #expect(try #require(runs[0].endedAt) <= runs[1].startedAt)
            #expect(runs[1].startedAt.timeIntervalSince(runs[0].startedAt) >= 1.9, "taken over before the 2 s lease ran out")
        }
        #expect(try await two.database.count("albumPhoto") == 1)
    }

    /// The bucket stops answering (moto stopped with SIGSTOP) while one instance stores an upload's photo (its put
    /// held by a proxy until then, so that it is under way): that instance answers its client 503 with `Retry-After`
    /// within its finishing bound (30 s) and lets the finishing go instead of renewing its lease for ever, so that once
    /// the bucket answers again the client's retry through the other instance finishes the upload: stored once,
    /// recorded once, no piece left.
    @Test func aFinisherStuckOnTheBucketLetsItsLeaseGo() async throws {
        let scratch = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let resume = scratch.appendingPathComponent("resume")
        let (two, proxy) = try await Self.start(s3Faults: ["--hold-path", "/user_photos/u1/held/", "--resume-file", resume.path], onlyA: true)
        let s3 = try #require(proxy)
        defer { kill(two.moto.server.processIdentifier, SIGCONT); two.a.stop(); two.b.stop() }
        let u1 = TestTokens.hs256(sub: "u1", claims: ["name": "Ana"])
        let photo = try Fixture.bytes("photos/storm-1920x1280.jpg")
        let key = "user_photos/u1/held/storm.jpg"
        let (created, location) = try await Self.create(two.a.endpoint, key: key, length: photo.count, token: u1)
        let id = try #require(location, "\(created)")

        async let sent = { () async throws -> (HTTPExchange, Duration) in
            let started = ContinuousClock.now
            let answer = try await HTTPExchange.send(
                "PATCH", two.a.endpoint + id, headers: Self.tus(u1, ["Upload-Offset": "0", "Content-Type": "application/offset+octet-stream"]), body: photo)
            return (answer, ContinuousClock.now - started)
        }()
        try await waitUntil(seconds: 60) { s3.held > 0 }
        kill(two.moto.server.processIdentifier, SIGSTOP)
        _ = FileManager.default.createFile(atPath: resume.path, contents: nil)
        let stopped = ContinuousClock.now

        // The lease: held while A stores the photo, then let go (no holder) or left to run out — not renewed for ever.
        var holding: (owner: String?, expires: Date?) = (nil, nil)
        repeat {
            try await Task.sleep(for: .seconds(1))
            let row = try #require(try await two.database.rows("SELECT \"finishOwner\", \"finishLeaseExpiresAt\" FROM \"tusUpload\"").first)
            holding = (try row.decode(column: "finishOwner", as: String?.self), try row.decode(column: "finishLeaseExpiresAt", as: Date?.self))
        } while holding.owner != nil && (holding.expires ?? .distantPast) > Date() && ContinuousClock.now - stopped < .seconds(90)
        let letGo = ContinuousClock.now - stopped
        #expect(letGo < .seconds(65), "the lease was still renewed \(letGo) after the bucket stopped: \(holding) \(two.a.log.suffix(2000))")

        let (answer, answeredAfter) = try await sent
        #expect(answer.status == 503 && answer.header("Retry-After") == "5", "\(answer) \(two.a.log.suffix(2000))")
        #expect(answeredAfter < .seconds(60), "A answered its client after \(answeredAfter)")

        kill(two.moto.server.processIdentifier, SIGCONT)
        var head = try await HTTPExchange.send("HEAD", two.b.endpoint + id, headers: Self.tus(u1))
        let deadline = ContinuousClock.now + .seconds(30)
        while [423, 503].contains(head.status) && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(200))
            head = try await HTTPExchange.send("HEAD", two.b.endpoint + id, headers: Self.tus(u1))
        }
        #expect(head.status == 200 && head.header("Upload-Offset") == String(photo.count), "\(head) \(two.b.log.suffix(2000))")
        #expect(try await two.photoKeys() == [key])
        #expect(try await two.pieceKeys().isEmpty)
        #expect(try await two.database.count("albumPhoto", where: "key", key) == 1)
        let runs = try await two.database.all(FinishRun.self, from: "tusUploadFinish", where: "upload", id, orderBy: "id")
        #expect(runs.last?.outcome == "done" && runs.first?.outcome?.hasPrefix("unavailable") == true, "\(runs)")
    }
}
