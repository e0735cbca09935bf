import Foundation
import PhotoUpload
import Testing
import TestSupport

/// A database that stops answering (the PostgreSQL connection's relay stopped with SIGSTOP), SQLite's write lock
/// held by another process, or a bucket that stops answering (moto stopped), while a photo is finishing: the request
/// is answered 503 in bounded time, SIGTERM still ends the server within `--shutdown-grace` plus the 5 s
/// cancellation bound, and nothing acknowledged is lost — with the dependency back, asking the upload's offset
/// finishes it.
@Suite struct ServeStuckDependencyTests {
    /// Asks the offset until it is not 423 or 503 (as tus clients do, at most 30 s).
    static func headUntilAnswered(_ location: String, token: String, on server: any HTTPCalls = AbsoluteURLs()) async throws -> HTTPExchange {
        var head = try await ServeRulesTests.head(server, location, token: token)
        let retryUntil = Date().addingTimeInterval(30)
        while [423, 503].contains(head.status) && Date() < retryUntil {
            try await Task.sleep(for: .milliseconds(200))
            head = try await ServeRulesTests.head(server, location, token: token)
        }
        return head
    }

    /// What a tus client does once the server answers again: asks the offset (`headUntilAnswered`), sends what the
    /// server does not hold of `photo`, and asks again; the last answer.
    static func resume(_ location: String, _ photo: [UInt8], token: String, server: PhotoServerProcess) async throws -> HTTPExchange {
        let head = try await headUntilAnswered(location, token: token)
        let held = try #require(head.header("Upload-Offset").flatMap(Int.init), "\(head) \(server.log.suffix(3000))")
        guard held < photo.count else { return head }
        let rest = try await ServeRulesTests.patch(location, offset: held, body: Array(photo[held...]), token: token)
        #expect(rest.status == 204, "\(rest) \(server.log.suffix(3000))")
        return try await headUntilAnswered(location, token: token)
    }

    /// Sends all of `photo` in one PATCH while a dependency fails: 503 with `Retry-After: 5` within `bound` (`why`
    /// says what bounds it), the body naming none of `hidden`.
    static func sendAllExpecting503(
        _ location: String, _ photo: [UInt8], token: String, within bound: Duration, because why: String, naming hidden: [String],
        on server: any HTTPCalls = AbsoluteURLs()
    ) async throws {
        let started = ContinuousClock.now
        let answer = try await ServeRulesTests.patch(server, location, offset: 0, body: photo, token: token)
        let took = ContinuousClock.now - started
        #expect(answer.status == 503 && answer.header("Retry-After") == "5", "\(answer)")
        #expect(took < bound, "answered after \(took): \(why)")
        #expect(!hidden.contains { answer.body.contains($0) }, "\(answer.body)")
    }

    @Test func aFinishWhoseDatabaseStopsAnsweringIs503InBoundedTime() async throws {
        let (relay, server) = try await SeededServer.relayedPostgres()
        defer { kill(relay.processIdentifier, SIGCONT); server.stop() }
        let token = TestTokens.hs256(sub: "u1", claims: ["name": "Ana"])
        let photo = try Fixture.bytes("photos/storm-1920x1280.jpg")
        let created = try await ServeRulesTests.create(server, key: "profile_images/u1/hung.jpg", length: photo.count, token: token)
        let location = try #require(created.header("Location"), "\(created)")

        kill(relay.processIdentifier, SIGSTOP)
        try await Self.sendAllExpecting503(location, photo, token: token, within: .seconds(25), because: "the statement deadline is 10 s", naming: ["127.0.0.1", "postgres"])

        kill(relay.processIdentifier, SIGCONT)
        let head = try await Self.headUntilAnswered(location, token: token)
        #expect(head.status == 200 && head.header("Upload-Offset") == String(photo.count), "\(head) \(server.log.suffix(3000))")
        #expect(server.stored("profile_images/u1/hung.jpg") != nil)
    }

    /// Another process holds SQLite's write lock (as a long `photoprep` command, or a backup, would): the last PATCH
    /// waits the busy timeout (10 s) once and is answered 503 with `Retry-After`, the bytes kept; once the lock is
    /// let go, asking the offset finishes the upload.
    @Test func aFinishWhileAnotherProcessHoldsSQLitesWriteLockIs503InBoundedTime() async throws {
        try await SeededRouter.run { server in
            let token = TestTokens.hs256(sub: "u1")
            let photo = try Fixture.bytes("photos/storm-1920x1280.jpg")
            let key = "profile_images/u1/locked.jpg"
            let created = try await ServeRulesTests.create(server, key: key, length: photo.count, token: token)
            let location = try #require(created.header("Location"), "\(created)")

            let holder = Process()
            holder.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            holder.arguments = [
                "-c",
                "import sqlite3, sys, time; c = sqlite3.connect(sys.argv[1], isolation_level=None); c.execute('BEGIN IMMEDIATE');"
                    + " print('locked', flush=True); time.sleep(60)",
                server.data.appendingPathComponent("app.sqlite").path,
            ]
            let output = Pipe()
            holder.standardOutput = output
            try launch(holder)
            defer { if holder.isRunning { kill(holder.processIdentifier, SIGKILL) } }
            let said = try await onThread { String(decoding: output.fileHandleForReading.availableData, as: UTF8.self) }
            try #require(said.contains("locked"), "the lock holder: \(said)")

            try await Self.sendAllExpecting503(
                location, photo, token: token, within: .seconds(25), because: "SQLite's busy timeout is 10 s", naming: [server.data.path], on: server)

            try await onThread {
                holder.terminate()
                holder.waitUntilExit()
            }
            let head = try await Self.headUntilAnswered(location, token: token, on: server)
            #expect(head.status == 200 && head.header("Upload-Offset") == String(photo.count), "\(head)")
            #expect(server.stored(key) != nil)
        }
    }

    @Test func sigtermEndsAServerWhoseFinishIsStuck() async throws {
        // Quotas off: with them the user's room is read before the put, and the finish is stuck there, before storage.
        let (relay, server) = try await SeededServer.relayedPostgres(["--shutdown-grace", "2", "--quota-bytes", "0", "--quota-photos", "0"])
        defer { kill(relay.processIdentifier, SIGCONT); server.stop() }
        let token = TestTokens.hs256(sub: "u1", claims: ["name": "Ana"])
        let photo = try Fixture.bytes("photos/storm-1920x1280.jpg")
        let key = "profile_images/u1/stuck.jpg"
        let created = try await ServeRulesTests.create(server, key: key, length: photo.count, token: token)
        let location = try #require(created.header("Location"), "\(created)")

        // The database stops answering; the whole photo is sent: prepared and put in storage, its record not written.
        kill(relay.processIdentifier, SIGSTOP)
        let connection = try ServeRulesTests.patchHead(server, location, declaring: photo.count, token: token)
        try connection.send(photo)
        let deadline = Date().addingTimeInterval(30)
        while server.stored(key) == nil && Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }
        try #require(server.stored(key) != nil, "the photo reached storage: \(server.log)")

        let ended = try await onThread { server.terminate(timeout: 60) }
        let took = try #require(ended, "SIGTERM did not end the server in 60 s: \(server.log.suffix(4000))")
        // The grace (2 s) and the cancellation bound (5 s), with room for a busy machine. Without them the server was
        // still alive after 90 s.
        #expect(took.seconds < 2 + 5 + 5, "ended in \(took.seconds) s: \(server.log.suffix(2000))")

        // The database back, the server started again: asking the offset finishes the upload (a 423 while the restarted
        // server's sweep is finishing it is asked again, as tus clients do), recorded once.
        kill(relay.processIdentifier, SIGCONT)
        try await onThread { try server.start() }
        let head = try await Self.headUntilAnswered(location, token: token)
        #expect(head.status == 200 && head.header("Upload-Offset") == String(photo.count), "\(head) \(server.log.suffix(3000))")
        let me = try await ServeAPITests.call(server, "GET", "/v1/me/photo", token: token)
        #expect(me.body["state"] as? String == "ready", "\(me.body)")
    }

    /// The bucket stops answering (moto stopped with SIGSTOP) while a photo's last bytes arrive: with SQLite the
    /// bytes are kept on disk and the photo's put to the bucket hangs; with PostgreSQL (uploads shared through the
    /// bucket) the bytes' own piece does. Either way the PATCH is answered 503 with `Retry-After` within the bucket's
    /// request bound (20 s); with the bucket answering again (SIGCONT), the client asks the offset and sends what the
    /// server does not hold, and the upload finishes: its photo in the bucket and recorded once.
    @Test(arguments: ["sqlite", "postgres"])
    func aFinishWhoseBucketStopsAnsweringIs503InBoundedTime(database: String) async throws {
        let bucket = try await BucketServer.start(database: database)
        let (moto, server) = (bucket.moto, bucket.server)
        defer { kill(moto.server.processIdentifier, SIGCONT); server.stop() }
        let photo = try Fixture.bytes("photos/storm-1920x1280.jpg")
        let key = "profile_images/u1/bucket.jpg"
        let (location, token) = try await bucket.newUpload(key, of: photo)

        kill(moto.server.processIdentifier, SIGSTOP)
        try await Self.sendAllExpecting503(location, photo, token: token, within: .seconds(35), because: "one bucket request may take 20 s", naming: ["127.0.0.1", "photos/prod"])

        kill(moto.server.processIdentifier, SIGCONT)
        let head = try await Self.resume(location, photo, token: token, server: server)
        #expect(head.status == 200 && head.header("Upload-Offset") == String(photo.count), "\(head) \(server.log.suffix(3000))")
        #expect(try await bucket.objects.list(prefix: "profile_images/u1/") == ["profile_images/u1/bucket.jpg"])
        let me = try await ServeAPITests.call(server, "GET", "/v1/me/photo", token: token)
        #expect(me.body["state"] as? String == "ready", "\(me.body)")
    }

    /// A finish slower than its bound (`--finish-timeout 3`) though nothing fails: the bucket holds the photo's put (a
    /// proxy in front of moto, until the test lets it go), on SQLite and on PostgreSQL (there the bytes' pieces, put
    /// and gathered again, pass). The PATCH is answered 503 with `Retry-After` soon after the bound, not when the put
    /// ends; the bytes are kept, and once the bucket answers, asking the offset finishes the upload: stored once.
    /// A small photo, so that preparing it takes a fraction of the bound even on a busy machine: the bound is spent
    /// waiting on the held put, as the test says.
    @Test(arguments: ["sqlite", "postgres"])
    func aFinishSlowerThanItsBoundIs503(database: String) async throws {
        let state = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: state) }
        let resume = state.appendingPathComponent("resume")
        let key = "profile_images/u1/slow.jpg"
        let bucket = try await BucketServer.start(
            database: database, faults: ["--hold-path", "profile_images/u1/", "--resume-file", resume.path], arguments: ["--finish-timeout", "3"])
        let server = bucket.server
        defer { server.stop() }
        let photo = try Fixture.bytes("orientation/landscape_1.jpg")
        let (location, token) = try await bucket.newUpload(key, of: photo)

        try await Self.sendAllExpecting503(location, photo, token: token, within: .seconds(12), because: "finishing is bounded at 3 s", naming: ["127.0.0.1", "photos/prod"])
        #expect(bucket.proxy?.held ?? 0 >= 1, "the put was held")

        _ = FileManager.default.createFile(atPath: resume.path, contents: nil)
        let head = try await Self.resume(location, photo, token: token, server: server)
        #expect(head.status == 200 && head.header("Upload-Offset") == String(photo.count), "\(head) \(server.log.suffix(3000))")
        #expect(try await bucket.objects.list(prefix: "profile_images/u1/") == [key])
        let me = try await ServeAPITests.call(server, "GET", "/v1/me/photo", token: token)
        #expect(me.body["state"] as? String == "ready", "\(me.body)")
    }

    /// A bucket that throttles (S3's `503 SlowDown`, from a proxy in front of moto) the photo's put (SQLite: the bytes
    /// kept on disk) or the bytes' own piece (PostgreSQL: uploads shared through the bucket), longer than the server's
    /// own retries: 503 with `Retry-After`, a body that names neither the bucket nor its host, an error-level log line
    /// with the bucket's words and the count — never a 500. Once the bucket takes requests again, asking the offset
    /// finishes the upload: the photo stored once.
    @Test(arguments: ["sqlite", "postgres"])
    func aThrottlingBucketIs503WithRetryAfter(database: String) async throws {
        let bucket = try await BucketServer.start(database: database, faults: ["--slow-down", "4"])
        let server = bucket.server
        defer { server.stop() }
        let photo = try Fixture.bytes("photos/storm-1920x1280.jpg")
        let key = "profile_images/u1/throttled.jpg"
        let (location, token) = try await bucket.newUpload(key, of: photo)

        try await Self.sendAllExpecting503(location, photo, token: token, within: .seconds(35), because: "one bucket request may take 20 s", naming: ["127.0.0.1", "photos/prod"])
        #expect(ServeFullStorageTests.loggedAsError(server, "SlowDown"), "\(server.log.suffix(2000))")
        #expect(try await ServeFullStorageTests.failures(server, "unavailable") >= 1)

        // A tus client: after each 503, the offset again and the rest from there, until the bucket takes requests again.
        var head = try await Self.headUntilAnswered(location, token: token)
        for _ in 0..<6 {
            let held = try #require(head.header("Upload-Offset").flatMap(Int.init), "\(head) \(server.log.suffix(3000))")
            if held == photo.count { break }
            let rest = try await ServeRulesTests.patch(location, offset: held, body: Array(photo[held...]), token: token)
            #expect(rest.status == 204 || (rest.status == 503 && rest.header("Retry-After") == "5"), "\(rest)")
            head = try await Self.headUntilAnswered(location, token: token)
        }
        #expect(head.status == 200 && head.header("Upload-Offset") == String(photo.count), "\(head) \(server.log.suffix(3000))")
        #expect(try await bucket.objects.list(prefix: "profile_images/u1/") == [key])
    }

    /// PostgreSQL goes away while a photo is finishing (uploads shared through PostgreSQL and the bucket, the finishing
    /// lease held in the database): a proxy in front of S3 holds the photo's put to its key; meanwhile the database's
    /// connections stop answering (the relay stopped), the put goes on, and the connections are cut and refused (the
    /// relay killed); then the database is back (a relay on the same port). The PATCH is answered 503 with
    /// `Retry-After`, never left waiting; with the database back, asking the offset finishes the upload — no 423 left
    /// over from the finishing that died with its connection beyond its 2 s lease — stored once, nothing left behind.
    @Test func aDatabaseRestartedWhileAPhotoIsFinishingLeavesNothingStuck() async throws {
        let scratch = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let resume = scratch.appendingPathComponent("resume")
        let moto = try await onThread { try MotoServer() }
        try await moto.createBucket("photos")
        let key = "profile_images/u1/restarted.jpg"
        let proxy = try await onThread { try FaultProxy(upstream: moto.server.port, faults: ["--hold-path", key, "--resume-file", resume.path]) }
        let (relay, server) = try await SeededServer.relayedPostgres(
            ["--to", "s3://photos/prod", "--job-lease", "2"], environment: moto.environment(endpoint: "http://127.0.0.1:\(proxy.server.port)"))
        defer { kill(relay.processIdentifier, SIGCONT); server.stop() }
        let token = TestTokens.hs256(sub: "u1", claims: ["name": "Ana"])
        let photo = try Fixture.bytes("photos/storm-1920x1280.jpg")
        let created = try await ServeRulesTests.create(server, key: key, length: photo.count, token: token)
        let location = try #require(created.header("Location"), "\(created)")

        async let patched = ServeRulesTests.patch(location, offset: 0, body: photo, token: token)
        try await waitUntil(seconds: 60) { proxy.held > 0 }
        kill(relay.processIdentifier, SIGSTOP)
        _ = FileManager.default.createFile(atPath: resume.path, contents: nil)
        try await Task.sleep(for: .seconds(2))
        let cut = ContinuousClock.now
        kill(relay.processIdentifier, SIGKILL)
        let answer = try await patched
        let took = ContinuousClock.now - cut
        #expect(answer.status == 503 && answer.header("Retry-After") == "5", "\(answer) \(server.log.suffix(3000))")
        #expect(took < .seconds(15), "answered \(took) after the database was cut")

        let back = try await SeededServer.postgresRelay(port: relay.port)
        defer { back.stop() }
        let head = try await Self.headUntilAnswered(location, token: token)
        #expect(head.status == 200 && head.header("Upload-Offset") == String(photo.count), "\(head) \(server.log.suffix(3000))")
        let objects = S3Objects(store: try S3Store(url: "s3://photos/prod", environment: moto.environment()))
        #expect(try await objects.list(prefix: "profile_images/u1/") == [key])
        #expect(try await objects.list(prefix: "partial-uploads/").isEmpty, "no piece left behind")
        let me = try await ServeAPITests.call(server, "GET", "/v1/me/photo", token: token)
        #expect(me.body["state"] as? String == "ready", "\(me.body)")
    }

    /// PostgreSQL itself stopped (`pg_ctl -m immediate`: every connection cut, new ones refused) just before four
    /// uploads' last bytes arrive, and started again: each PATCH is answered 503 with `Retry-After` in bounded time,
    /// never left waiting; with the database back, a tus client's retry finishes each upload — a 423 only while
    /// another request is finishing it, not for minutes — each photo stored and recorded; SIGTERM then ends the server
    /// at once.
    @Test func postgreSQLStoppedAndStartedWhileUploadsFinish() async throws {
        let cluster = try await PostgresCluster.own()
        defer { cluster.remove() }
        let url = try await cluster.newDatabase()
        let server = try await onThread { try PhotoServerProcess(arguments: ["--database", url]) }
        defer { server.stop() }
        let photo = try Fixture.bytes("photos/storm-1920x1280.jpg")
        var uploads: [(location: String, token: String)] = []
        for user in ["u1", "u2", "u3", "u4"] {
            let token = TestTokens.hs256(sub: user, claims: ["name": user])
            let created = try await ServeRulesTests.create(server, key: "profile_images/\(user)/me.jpg", length: photo.count, token: token)
            uploads.append((try #require(created.header("Location"), "\(created)"), token))
        }

        try await onThread { try cluster.stop() }
        let answers = await withTaskGroup(of: (Int, Result<HTTPExchange, any Error>, Duration).self) { group in
            for (index, upload) in uploads.enumerated() {
                group.addTask {
                    let started = ContinuousClock.now
                    do {
                        let answer = try await ServeRulesTests.patch(upload.location, offset: 0, body: photo, token: upload.token)
                        return (index, .success(answer), ContinuousClock.now - started)
                    } catch {
                        return (index, .failure(error), ContinuousClock.now - started)
                    }
                }
            }
            return await group.reduce(into: [:]) { $0[$1.0] = ($1.1, $1.2) }
        }
        for (index, (answer, took)) in answers.sorted(by: { $0.key < $1.key }) {
            switch answer {
            case .success(let answer):
                #expect(answer.status == 503 && answer.header("Retry-After") == "5", "upload \(index): \(answer)")
                #expect(took < .seconds(25), "upload \(index) answered after \(took)")
                #expect(!answer.body.contains("127.0.0.1") && !answer.body.contains(server.data.path), "\(answer.body)" as Comment)
            case .failure(let error):
                Issue.record("upload \(index): no answer (\(error)) after \(took): \(server.log.suffix(2000))")
            }
        }

        try await onThread { try cluster.start() }
        for (index, upload) in uploads.enumerated() {
            let head = try await Self.resume(upload.location, photo, token: upload.token, server: server)
            #expect(head.status == 200 && head.header("Upload-Offset") == String(photo.count), "upload \(index): \(head) \(server.log.suffix(2000))")
        }
        for user in ["u1", "u2", "u3", "u4"] {
            let me = try await ServeAPITests.call(server, "GET", "/v1/me/photo", token: TestTokens.hs256(sub: user))
            #expect(me.body["state"] as? String == "ready", "\(user): \(me.body)")
            #expect(server.stored("profile_images/\(user)/me.jpg") != nil)
        }
        let ended = try await onThread { server.terminate(timeout: 30) }
        #expect((ended?.seconds ?? 30) < 10, "SIGTERM ended the server after \(ended?.seconds ?? 30) s")
    }
}
