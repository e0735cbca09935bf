import Foundation
import SQLKit
import PhotoPrep
import PhotoServices
import PhotoUpload
import Testing
import TestSupport

/// The server crashed, stopped, or under load from a second process: no acknowledged byte is lost,
/// clients resume, every stored object is what the pipeline makes of the original.
@Suite(.serialized) struct ServeResilienceTests {
    /// The largest upload the rules allow (an album photo just under 10 MiB, 20 MP), sent in 256 KiB
    /// chunks by `photoprep upload` through a proxy; the server is killed (SIGKILL) half-way and started
    /// again a second later: the client resumes from the acknowledged offset.
    @Test func theServerKilledHalfWayThroughALargeUpload() async throws {
        let seeded = try await SeededServer.start()
        let file = try await onThread { BigPhotos.twentyMPLarge }
        let original = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
        #expect(original.count > 9 * 1024 * 1024)
        // The proxy holds the upload once half of it was accepted, whatever the machine's load.
        let state = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: state) }
        let resume = state.appendingPathComponent("resume")
        let half = original.count / 2
        let proxy = try FaultProxy(upstream: seeded.server.port, faults: ["--pause-after-bytes", String(half), "--resume-file", resume.path])
        let client = try BackgroundCommand([
            "upload", file, "--to", proxy.endpoint, "--key-prefix", "user_photos/u1/trip/", "--token", TestTokens.hs256(sub: "u1"),
            "--chunk-size", "256KiB", "--state", state.path.appending("/journal"), "--json",
        ])
        let deadline = Date().addingTimeInterval(120)
        while proxy.dataBytes < half && Date() < deadline && client.isRunning { try await Task.sleep(for: .milliseconds(20)) }
        seeded.server.kill()
        let uploads = seeded.server.data.appendingPathComponent("uploads")
        let atKill = ((try? FileManager.default.contentsOfDirectory(atPath: uploads.path)) ?? []).filter { $0.hasSuffix(".bin") }
            .compactMap { (try? FileManager.default.attributesOfItem(atPath: uploads.appendingPathComponent($0).path))?[.size] as? Int }.max() ?? 0
        #expect(atKill >= half && atKill < original.count, "held \(atKill) of \(original.count)")
        // Every byte the client was told about is on disk.
        let acknowledged = client.stdout.split(separator: "\n").compactMap { line -> Int? in
            guard let json = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], json["event"] as? String == "progress" else { return nil }
            return json["acknowledged"] as? Int
        }.max() ?? 0
        #expect(acknowledged > 0 && acknowledged <= atKill)
        // The held request now meets a dead server; the client retries until it is back.
        _ = FileManager.default.createFile(atPath: resume.path, contents: nil)
        try await Task.sleep(for: .seconds(1))
        try seeded.server.start()

        let result = try #require(await client.wait(timeout: 180), "the client did not finish")
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("\"retrying\""))
        // Resumed, not restarted: the server accepted the file once, plus at most the chunk in flight at the kill.
        #expect(proxy.dataBytes <= original.count + 256 * 1024, "accepted \(proxy.dataBytes) for \(original.count)")
        // Complete and correct: exactly what the pipeline makes of the whole original.
        let expected = try PhotoPipeline(preset: .photo).prepare(original).jpeg
        #expect(seeded.server.stored("user_photos/u1/trip/20mp-large.jpg") == expected)
        _ = try checkNormalised(seeded.server.stored("user_photos/u1/trip/20mp-large.jpg"), preset: .photo, portrait: true)
    }

    /// kill -9 at random moments (a seeded generator; its seed is in every failure's message) while four clients upload
    /// photos in 16 KiB chunks, the server started again at once each time, eight times — on SQLite with the photos in
    /// the data folder, and on PostgreSQL with the photos and the uploads in progress in a moto bucket: no offset the
    /// server acknowledged is ever taken back (a client's HEAD never says less), every upload finishes, each stored
    /// photo is what the pipeline makes of its original and is recorded, and nothing is recorded without its object.
    @Test(arguments: ["sqlite", "postgres"])
    func killedAtRandomMomentsWhileUploadsRun(database kind: String) async throws {
        let bucket = kind == "postgres" ? try await BucketServer.start(database: kind) : nil
        let seeded = bucket == nil ? try await SeededServer.start() : nil
        let server = try #require(bucket?.server ?? seeded?.server)
        func stored(_ key: String) async throws -> [UInt8]? {
            if let bucket { return try await bucket.objects.get(key) }
            return server.stored(key)
        }
        let token = TestTokens.hs256(sub: "u1")
        let seed = UInt64.random(in: 1...UInt64.max)
        let photos = try ["storm-1920x1280", "ladybird-2560x1600", "storm-1920x1280", "ladybird-2560x1600"].enumerated().map { index, name in
            (key: "user_photos/u1/trip/\(index)-\(name).jpg", bytes: try Fixture.bytes("photos/\(name).jpg"))
        }

        /// A tus client that records what the server acknowledged: after any failure, the offset again (HEAD), checked
        /// against the last acknowledged one, and the rest from there. Its complaints (empty when all held) and how
        /// many of its requests the kills cut.
        @Sendable func upload(_ key: String, _ photo: [UInt8]) async -> (complaints: [String], cut: Int) {
            var complaints: [String] = []
            var cut = 0
            var location: String?
            var acknowledged = 0
            let deadline = ContinuousClock.now + .seconds(180)
            while ContinuousClock.now < deadline {
                do {
                    guard let at = location else {
                        let created = try await ServeRulesTests.create(server, key: key, length: photo.count, token: token)
                        if created.status == 201 { location = created.header("Location") } else { try await Task.sleep(for: .milliseconds(50)) }
                        continue
                    }
                    let head = try await ServeRulesTests.head(at, token: token)
                    guard head.status == 200, let offset = head.header("Upload-Offset").flatMap(Int.init) else {
                        if ![423, 503].contains(head.status) { complaints.append("\(key): HEAD answered \(head)") }
                        try await Task.sleep(for: .milliseconds(100))
                        continue
                    }
                    if offset < acknowledged { complaints.append("\(key): HEAD says \(offset) after \(acknowledged) was acknowledged") }
                    if offset == photo.count { return (complaints, cut) }
                    var sent = offset
                    while sent < photo.count {
                        let end = min(sent + 16 * 1024, photo.count)
                        let answer = try await ServeRulesTests.patch(at, offset: sent, body: Array(photo[sent..<end]), token: token)
                        guard answer.status == 204, let now = answer.header("Upload-Offset").flatMap(Int.init) else { break }
                        acknowledged = max(acknowledged, now)
                        sent = now
                    }
                } catch {
                    cut += 1
                    try? await Task.sleep(for: .milliseconds(50))  // the server is down: ask again
                }
            }
            return (complaints + ["\(key): not finished within 180 s"], cut)
        }

        let (complaints, cut) = try await withThrowingTaskGroup(of: (complaints: [String], cut: Int).self) { group in
            for photo in photos { group.addTask { await upload(photo.key, photo.bytes) } }
            var random = SeededGenerator(state: seed)
            for _ in 0..<8 {
                try await Task.sleep(for: .milliseconds(Int.random(in: 20...300, using: &random)))
                try await onThread {
                    server.kill()
                    try server.start()
                }
            }
            return try await group.reduce(([String](), 0)) { ($0.0 + $1.complaints, $0.1 + $1.cut) }
        }
        defer { server.stop() }
        #expect(complaints.isEmpty, "seed \(seed): \(complaints)")
        #expect(cut >= 4, "seed \(seed): the uploads met the server down only \(cut) times: the kills came after them")
        let database = if let url = bucket?.database { try await AppDatabase(postgres: url, role: .server) } else { try await seeded!.database() }
        for photo in photos {
            let expected = try PhotoPipeline(preset: .photo).prepare(photo.bytes).jpeg
            #expect(try await stored(photo.key) == expected, "seed \(seed): \(photo.key) stored as the pipeline makes it")
            #expect(try await database.one(StoredPhoto.self, from: "storedPhoto", id: photo.key, key: "key") != nil, "seed \(seed): \(photo.key) recorded")
        }
        for record in try await database.all(StoredPhoto.self, from: "storedPhoto", orderBy: "key") {
            #expect(try await stored(record.key) != nil, "seed \(seed): \(record.key) recorded without its object")
        }
    }

    /// SIGTERM while uploads are in flight — one with a body still arriving slowly, one from
    /// `photoprep upload` — exits 0 within 10 s; the slow request is answered with what the server
    /// flushed, every acknowledged byte is there after a restart, and both uploads complete.
    @Test func sigtermDuringUploads() async throws {
        let seeded = try await SeededServer.start()
        let u1 = TestTokens.hs256(sub: "u1")
        let jpeg = try Fixture.bytes("photos/ladybird-2560x1600.jpg")
        let created = try await ServeRulesTests.create(seeded.server, key: "user_photos/u1/a/slow.jpg", length: jpeg.count, token: u1)
        let location = try #require(created.header("Location"))
        let slow = try await ServeRulesTests.slowPatch(seeded.server, location, body: jpeg, sent: 300_000, token: u1)

        let proxy = try FaultProxy(upstream: seeded.server.port, faults: ["--delay-data", "0.2"])
        let state = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: state) }
        let client = try BackgroundCommand([
            "upload", try await onThread { BigPhotos.twentyMP }, "--to", proxy.endpoint, "--key-prefix", "user_photos/u1/trip/", "--token", u1,
            "--chunk-size", "256KiB", "--state", state.path,
        ])
        let deadline = Date().addingTimeInterval(30)
        while seeded.server.log.components(separatedBy: "PATCH").count < 4 && Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }

        let stopped = try #require(seeded.server.terminate(timeout: 15), "still running 15 s after SIGTERM")
        #expect(stopped.status == 0)
        #expect(stopped.seconds < 10)
        print("SIGTERM with uploads in flight: exit \(stopped.status) after \(String(format: "%.2f", stopped.seconds)) s")
        // The slow request was answered with the bytes the server flushed.
        let answer = try await slow.receive(timeout: 5)
        #expect(answer.hasPrefix("HTTP/1.1 204"), "\(answer)")
        let acknowledged = answer.split(separator: "\r\n").first { $0.hasPrefix("Upload-Offset:") }
            .flatMap { Int($0.dropFirst("Upload-Offset:".count).trimmingCharacters(in: .whitespaces)) }
        #expect((acknowledged ?? 0) >= 300_000)

        try seeded.server.start()
        let head = try await ServeRulesTests.head(location, token: u1)
        #expect(Int(head.header("Upload-Offset") ?? "") == acknowledged)
        let offset = try #require(acknowledged)
        let rest = try await ServeRulesTests.patch(location, offset: offset, body: Array(jpeg[offset...]), token: u1)
        #expect(rest.status == 204)
        #expect(seeded.server.stored("user_photos/u1/a/slow.jpg") == (try PhotoPipeline(preset: .photo).prepare(jpeg).jpeg))

        let result = try #require(await client.wait(timeout: 180), "the client did not finish")
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        _ = try checkNormalised(seeded.server.stored("user_photos/u1/trip/20mp.jpg"), preset: .photo, portrait: true)
    }

    /// 100 uploads at once from a second process (tuspy, one connection each, 100 users): every one
    /// finishes, every stored object is exactly what the pipeline makes of its original, no request
    /// fails, and the server's peak memory stays under 300 MB.
    @Test func oneHundredConcurrentUploads() async throws {
        let seeded = try await SeededServer.start()
        let files = (1...8).map { Fixture.path("orientation/landscape_\($0).jpg") }
            + [Fixture.path("photos/storm-1920x1280.jpg"), Fixture.path("photos/ladybird-2560x1600.jpg")]
        let run = try await runSupportScript("load_uploads.py", [seeded.server.endpoint] + files + ["--count", "100"], environment: ["PHOTOPREP_JWT_SECRET": TestTokens.secret])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run.stdout)\(run.stderr)")
        #expect(report["ok"] as? Int == 100, "\(report["failed"] ?? "")")
        let uploads = report["uploads"] as? [[String: Any]] ?? []
        #expect(uploads.count == 100, "every upload reported")
        var expected: [String: [UInt8]] = [:]
        for upload in uploads {
            let key = upload["key"] as! String, file = upload["file"] as! String
            let preset: PrepareOptions.Preset = key.hasPrefix("profile_images/") ? .profile : .photo
            let cacheKey = "\(preset.rawValue):\(file)"
            if expected[cacheKey] == nil { expected[cacheKey] = try PhotoPipeline(preset: preset).prepare(contentsOf: file).jpeg }
            #expect(seeded.server.stored(key) == expected[cacheKey], "\(key)")
        }
        let database = try await seeded.database()
        #expect(try await database.all(User.self, from: "user").filter { $0.profilePhotoKey?.hasPrefix("profile_images/load") == true }.count == 50)
        #expect(try await database.count("albumPhoto", where: "state", "done") == 50)
        let peak = try #require(seeded.server.peakRSSKiB)
        print("100 concurrent uploads: \(report["seconds"] ?? "?") s, server peak RSS \(peak / 1024) MiB")
        #expect(peak < 300 * 1024)
        // No request failed on the server's side.
        let metrics = try await HTTPExchange.send("GET", seeded.server.base + "/metrics").body
        #expect(!metrics.split(separator: "\n").contains { $0.hasPrefix("photoprep_requests_total") && $0.contains("status=\"5") }, "\(metrics)")
        #expect(metrics.contains("photoprep_photos_stored_total 100"))
    }
}
