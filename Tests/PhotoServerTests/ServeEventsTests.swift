import Foundation
import Testing
import TestSupport

/// Events after the fact (`--events-url`), end to end against `photoprep serve`: a real receiver on 127.0.0.1
/// (`events_receiver.py`) that verifies each signature with the `standardwebhooks` package, keeps the ids it accepted,
/// and accepts, fails, or fails each event once.
@Suite struct ServeEventsTests {
    /// A receiver, the file it records each delivery in, and the secrets it verifies with.
    struct Receiver {
        let process: ServerProcess
        let record: URL

        static func start(secrets: [String], port: Int = ServerProcess.freePort()) async throws -> Receiver {
            let record = try temporaryFolder().appendingPathComponent("events.jsonl")
            let script = projectFolder.appendingPathComponent("Tests/TestSupport/Support/events_receiver.py").path
            let process = try await onThread {
                try ServerProcess(port: port, executable: "python3", arguments: [script, String(port), record.path, secrets.joined(separator: " ")])
            }
            return Receiver(process: process, record: record)
        }

        func url(_ path: String) -> String { "http://127.0.0.1:\(process.port)/\(path)" }

        /// Each delivery, in the order they arrived.
        var deliveries: [[String: Any]] {
            ((try? String(contentsOf: record, encoding: .utf8)) ?? "").split(separator: "\n")
                .compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        }

        /// The deliveries it accepted (204).
        var accepted: [[String: Any]] { deliveries.filter { $0["status"] as? Int == 204 } }
    }

    /// Two secrets made by `photoprep events secret`, in a file (one a line), as serve's `--events-secret-file` takes them.
    static func secrets() async throws -> (file: URL, secrets: [String]) {
        var secrets: [String] = []
        for _ in 0..<2 {
            let made = try await photoprep(["events", "secret"])
            secrets.append(made.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        #expect(secrets.allSatisfy { $0.hasPrefix("whsec_") } && secrets[0] != secrets[1], "\(secrets)")
        let file = try temporaryFolder().appendingPathComponent("events-secrets")
        try secrets.joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
        return (file, secrets)
    }

    static func type(_ delivery: [String: Any]) -> String? { (delivery["body"] as? [String: Any])?["type"] as? String }
    static func data(_ delivery: [String: Any]) -> [String: Any] { ((delivery["body"] as? [String: Any])?["data"] as? [String: Any]) ?? [:] }

    static func events(_ server: PhotoServerProcess, database: String? = nil, _ more: [String] = []) async throws -> [[String: Any]] {
        let place = database.map { ["--database", $0] } ?? ["--data", server.data.path]
        let listed = try await photoprep(["events", "list", "--json", "--limit", "1000"] + place + more)
        #expect(listed.status == 0, "\(listed.stderr)")
        return listed.jsonLines
    }

    /// Every change a user makes reaches the receiver once, signed under both secrets (rotation), in the order it
    /// happened: a group created before the server started, an album photo, a profile picture replaced, then removed.
    /// `photo.stored` tells the bytes stored.
    @Test func eachChangeReachesTheReceiverOnceSignedAndInOrder() async throws {
        let (file, secrets) = try await Self.secrets()
        let receiver = try await Receiver.start(secrets: secrets)
        let seeded = try await SeededServer.start(arguments: ["--events-url", receiver.url("ok"), "--events-secret-file", file.path])
        let server = seeded.server
        let token = TestTokens.hs256(sub: "u1", claims: ["name": "Ana"])
        let photo = try Fixture.bytes("orientation/landscape_1.jpg")
        for key in ["user_photos/u1/trip/a.jpg", "profile_images/u1/one.jpg", "profile_images/u1/two.jpg"] {
            let answer = try await ServeRulesTests.createWithUpload(server, key: key, bytes: photo, token: token)
            #expect(answer.status == 201, "\(answer)")
        }
        #expect(try await server.send("DELETE", "/v1/me/photo", headers: ["Authorization": "Bearer \(token)"]).status == 204)
        try await waitUntil { receiver.accepted.count >= 10 }
        try await Task.sleep(for: .milliseconds(500))  // nothing more arrives
        let delivered = receiver.deliveries
        #expect(delivered.count == 10, "\(delivered)")
        #expect(delivered.allSatisfy { $0["verifiedBy"] as? [Int] == [0, 1] && $0["status"] as? Int == 204 && $0["duplicate"] as? Bool == false }, "\(delivered)")
        #expect(Set(delivered.compactMap { $0["id"] as? String }).count == 10)
        let ana = delivered.filter { Self.type($0) != "group.created" }
        #expect(ana.compactMap(Self.type) == [
            "photo.stored", "album.photoAdded", "photo.stored", "user.profilePhotoChanged", "photo.stored", "user.profilePhotoChanged", "photo.deleted",
            "user.profilePhotoChanged", "photo.deleted",
        ], "\(ana)")
        let group = try #require(delivered.first { Self.type($0) == "group.created" })
        #expect(Self.data(group)["groupId"] as? String == seeded.groupId && Self.data(group)["members"] as? [String] == ["u1", "u2", "u3"])
        let stored = Self.data(ana[0])
        let storedFile = seeded.data.appendingPathComponent("storage/user_photos/u1/trip/a.jpg")
        let size = try #require(try FileManager.default.attributesOfItem(atPath: storedFile.path)[.size] as? Int)
        #expect(stored["key"] as? String == "user_photos/u1/trip/a.jpg" && stored["size"] as? Int == size && stored["by"] as? String == "u1", "\(stored)")
        #expect(Self.data(ana[6])["key"] as? String == "profile_images/u1/one.jpg" && Self.data(ana[8])["key"] as? String == "profile_images/u1/two.jpg")
        #expect(Self.data(ana[7]).keys.contains("key") && Self.data(ana[7])["key"] is NSNull)
        let listed = try await Self.events(server)
        #expect(listed.count == 10 && listed.allSatisfy { $0["state"] as? String == "delivered" }, "\(listed)")
        let recorded = listed.reversed().filter { $0["subject"] as? String == "user:u1" }.compactMap { $0["id"] as? String }
        #expect(recorded == ana.compactMap { $0["id"] as? String }, "Ana's delivered in the order recorded")
    }

    /// A receiver that fails each event once gets it again, the same `webhook-id`, after the backoff; one that keeps
    /// failing makes the events dead after `--events-attempts`: counted in `/metrics`, listed with why, sent again by
    /// `photoprep events retry` once the receiver is back.
    @Test func failedDeliveriesAreRetriedThenDeadThenRetriedByHand() async throws {
        let (file, secrets) = try await Self.secrets()
        let receiver = try await Receiver.start(secrets: secrets)
        let flaky = ["--events-secret-file", file.path, "--events-first-delay", "0.2"]
        let seeded = try await SeededServer.start(arguments: ["--events-url", receiver.url("flaky")] + flaky)
        try await waitUntil { receiver.accepted.count >= 1 }
        let group = receiver.deliveries
        #expect(group.map { $0["status"] as? Int } == [500, 204] && group[0]["id"] as? String == group[1]["id"] as? String, "\(group)")
        #expect(seeded.server.log.contains("not delivered, attempt 1: the receiver answered 500"), "\(seeded.server.log)")
        seeded.server.stop()

        let failing = try await Receiver.start(secrets: secrets)
        let dead = try await SeededServer.start(arguments: ["--events-url", failing.url("fail"), "--events-attempts", "2"] + flaky)
        let server = dead.server
        let token = TestTokens.hs256(sub: "u1")
        let answer = try await ServeRulesTests.createWithUpload(server, key: "user_photos/u1/trip/a.jpg", bytes: try Fixture.bytes("orientation/landscape_1.jpg"), token: token)
        #expect(answer.status == 201, "\(answer)")
        let deadline = ContinuousClock.now + .seconds(30)
        var metrics = ""
        repeat {
            try await Task.sleep(for: .milliseconds(200))
            metrics = try await server.send("GET", "/metrics").body
        } while !(metrics.contains(#"photoprep_events{state="dead"} 3"#) && metrics.contains(#"photoprep_event_deliveries_total{outcome="dead"} 3"#))
            && ContinuousClock.now < deadline
        #expect(metrics.contains(#"photoprep_events{state="dead"} 3"#) && metrics.contains(#"photoprep_event_deliveries_total{outcome="dead"} 3"#), "\(metrics)")
        #expect(failing.deliveries.count == 6 && failing.accepted.isEmpty, "three events, two attempts each: \(failing.deliveries)")
        let listed = try await Self.events(server, ["--state", "dead"])
        #expect(listed.count == 3 && listed.allSatisfy { $0["lastError"] as? String == "the receiver answered 500 (attempt 2 of 2)" }, "\(listed)")
        #expect(server.log.contains("is dead: the receiver answered 500"), "\(server.log)")
        try "".write(toFile: failing.record.path + ".healed", atomically: true, encoding: .utf8)
        let retried = try await photoprep(["events", "retry", "--data", server.data.path])
        #expect(retried.status == 0 && retried.stdout.split(separator: "\n").count == 3, "\(retried)")
        try await waitUntil { failing.accepted.count == 3 }
        #expect(Set(failing.accepted.compactMap { $0["id"] as? String }) == Set(listed.compactMap { $0["id"] as? String }))
        let missing = try await photoprep(["events", "retry", "--data", server.data.path, "evt_nosuchevent"])
        #expect(missing.status != 0 && missing.stderr.contains("evt_nosuchevent: no such event kept, or it is pending already"), "\(missing)")
    }

    /// A receiver that cuts the connection (a TCP reset, no answer) to each event's first delivery gets it again, the
    /// same `webhook-id`, after the backoff; the cut is logged as the attempt's failure.
    @Test func aReceiverThatCutsTheConnectionGetsTheEventAgain() async throws {
        let (file, secrets) = try await Self.secrets()
        let receiver = try await Receiver.start(secrets: secrets)
        let seeded = try await SeededServer.start(
            arguments: ["--events-url", receiver.url("cut"), "--events-secret-file", file.path, "--events-first-delay", "0.2"])
        defer { seeded.server.stop() }
        try await waitUntil { receiver.accepted.count >= 1 }
        let group = receiver.deliveries
        #expect(group.map { $0["status"] as? Int } == [0, 204] && group[0]["id"] as? String == group[1]["id"] as? String, "\(group)")
        #expect(Self.type(group[1]) == "group.created" && group[1]["verifiedBy"] as? [Int] == [0, 1], "\(group)")
        #expect(seeded.server.log.contains("not delivered, attempt 1:"), "\(seeded.server.log)")
    }

    /// Events survive a `kill -9` between the change and its delivery: recorded with the change, sent after the
    /// restart, each once. (An attempt on a receiver that is down lasts its timeout — the HTTP client retries the
    /// connection meanwhile — so the kill likely lands in one, under a lease: the restarted server waits out the lease.)
    @Test func eventsSurviveAKillBetweenTheChangeAndTheDelivery() async throws {
        let (file, secrets) = try await Self.secrets()
        let port = ServerProcess.freePort()  // nobody listens yet: the receiver is down
        let arguments = ["--events-url", "http://127.0.0.1:\(port)/ok", "--events-secret-file", file.path, "--events-first-delay", "0.2",
            "--events-timeout", "1", "--job-lease", "3",
        ]
        let seeded = try await SeededServer.start(arguments: arguments)
        let server = seeded.server
        let answer = try await ServeRulesTests.createWithUpload(
            server, key: "profile_images/u2/me.jpg", bytes: try Fixture.bytes("orientation/landscape_1.jpg"), token: TestTokens.hs256(sub: "u2"))
        #expect(answer.status == 201, "\(answer)")
        server.kill()
        let pending = try await Self.events(server, ["--state", "pending"])
        #expect(pending.count == 3, "group.created, photo.stored, user.profilePhotoChanged: \(pending)")
        let receiver = try await Receiver.start(secrets: secrets, port: port)
        try await onThread { try server.start() }
        try await waitUntil(seconds: 30) { receiver.accepted.count >= 3 }
        try await Task.sleep(for: .milliseconds(500))
        #expect(receiver.deliveries.count == 3 && receiver.deliveries.allSatisfy { $0["duplicate"] as? Bool == false }, "\(receiver.deliveries)")
        #expect(Set(receiver.deliveries.compactMap { $0["id"] as? String }) == Set(pending.compactMap { $0["id"] as? String }))
    }

    /// Two instances on one PostgreSQL database deliver every event once between them, each user's in the order recorded.
    @Test func twoInstancesOnPostgreSQLSendEachEventOnce() async throws {
        let (file, secrets) = try await Self.secrets()
        let receiver = try await Receiver.start(secrets: secrets)
        let url = try await PostgresCluster.shared().newDatabase()
        let shared = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: shared) }
        let arguments = ["--database", url, "--to", shared.path, "--events-url", receiver.url("ok"), "--events-secret-file", file.path]
        let first = try await onThread { try PhotoServerProcess(arguments: arguments) }
        defer { first.stop() }
        let second = try await onThread { try PhotoServerProcess(arguments: arguments) }
        defer { second.stop() }
        let photo = try Fixture.bytes("orientation/landscape_1.jpg")
        try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<12 {
                let server = index % 2 == 0 ? first : second
                let user = "u\(index % 3 + 1)"
                group.addTask {
                    try await ServeRulesTests.createWithUpload(server, key: "user_photos/\(user)/trip/p\(index).jpg", bytes: photo, token: TestTokens.hs256(sub: user)).status
                }
            }
            for try await status in group { #expect(status == 201) }
        }
        try await waitUntil(seconds: 30) { receiver.accepted.count >= 24 }
        try await Task.sleep(for: .milliseconds(500))
        let delivered = receiver.deliveries
        #expect(delivered.count == 24 && delivered.allSatisfy { $0["duplicate"] as? Bool == false && $0["verifiedBy"] as? [Int] == [0, 1] }, "\(delivered)")
        let recorded = try await Self.events(first, database: url).reversed().map { $0 }
        #expect(recorded.count == 24 && recorded.allSatisfy { $0["state"] as? String == "delivered" })
        for user in ["u1", "u2", "u3"] {
            let inOrder = recorded.filter { $0["subject"] as? String == "user:\(user)" }.compactMap { $0["id"] as? String }
            let arrived = delivered.filter { (Self.data($0)["key"] as? String)?.hasPrefix("user_photos/\(user)/") == true }.compactMap { $0["id"] as? String }
            #expect(arrived == inOrder, "\(user)'s events arrived in the order they were recorded")
        }
        let senders = [first.log, second.log]
        #expect(senders.allSatisfy { !$0.contains("events:") }, "no delivery errors: \(senders)")
    }

    /// The backend the README shows, run as it is written there: it answers the upload hook (uploads declaring 8 MB or
    /// more refused with its status and message), verifies each event's signature and prints its type and id.
    @Test func theReadmeReceiverVerifiesAndPrintsEachEvent() async throws {
        let readme = try String(contentsOf: projectFolder.appendingPathComponent("README.md"), encoding: .utf8)
        let section = try #require(readme.range(of: "## Your backend in the loop"), "the README's section on hooks and events")
        let rest = readme[section.upperBound...]
        let start = try #require(rest.range(of: "```python\n"))
        let end = try #require(rest[start.upperBound...].range(of: "```"))
        let folder = try temporaryFolder()
        let script = folder.appendingPathComponent("receiver.py"), printed = folder.appendingPathComponent("printed.txt")
        try String(rest[start.upperBound..<end.lowerBound]).write(to: script, atomically: true, encoding: .utf8)
        let (file, secrets) = try await Self.secrets()
        let port = ServerProcess.freePort()
        let receiver = try await onThread {
            try ServerProcess(port: port, executable: "sh", arguments: [
                "-c", "SECRET='\(secrets[0])' PORT=\(port) exec python3 '\(script.path)' > '\(printed.path)'",
            ])
        }
        defer { receiver.stop() }
        let seeded = try await SeededServer.start(arguments: [
            "--hook-url", "http://127.0.0.1:\(port)/hook", "--events-url", "http://127.0.0.1:\(port)/", "--events-secret-file", file.path,
        ])
        let large = try await ServeRulesTests.create(seeded.server, key: "user_photos/u1/trip/big.jpg", length: 9_000_000, token: TestTokens.hs256(sub: "u1"))
        #expect(large.status == 413 && large.body.trimmingCharacters(in: .newlines) == "photos up to 8 MB here", "\(large)")
        let answer = try await ServeRulesTests.createWithUpload(
            seeded.server, key: "user_photos/u1/trip/a.jpg", bytes: try Fixture.bytes("orientation/landscape_1.jpg"), token: TestTokens.hs256(sub: "u1"))
        #expect(answer.status == 201, "\(answer)")
        try await waitUntil { ((try? String(contentsOf: printed, encoding: .utf8)) ?? "").split(separator: "\n").count >= 3 }
        let lines = try String(contentsOf: printed, encoding: .utf8).split(separator: "\n").map { $0.split(separator: " ") }
        #expect(lines.map { String($0[0]) } == ["group.created", "photo.stored", "album.photoAdded"], "\(lines)")
        #expect(lines.allSatisfy { $0.count == 2 && $0[1].hasPrefix("evt_") })
        let listed = try await Self.events(seeded.server)
        #expect(listed.count == 3 && listed.allSatisfy { $0["state"] as? String == "delivered" && $0["attempts"] as? Int == 1 }, "\(listed)")
    }

    /// `photoprep serve` refuses, before it starts, a secret that is not one (here PHOTOPREP_EVENTS_SECRET's), a secret file
    /// it cannot read, and a review
    /// it could never ask — each naming the flag.
    @Test(arguments: [
        (["--events-url", "http://127.0.0.1:9/"], "--events-url needs its signing secret (--events-secret-file or PHOTOPREP_EVENTS_SECRET): webhook secret 1: not whsec_ and base64 of at least 24 bytes"),
        (["--events-url", "http://127.0.0.1:9/", "--events-secret-file", "/nonexistent/secret"], "--events-secret-file /nonexistent/secret: cannot be read"),
        (["--review-url", "ftp://review.example.com"], "--review-url ftp://review.example.com: an http:// or https:// URL"),
        (["--review-url", "http://127.0.0.1:9/", "--review-failure", "maybe"], "--review-failure maybe: refuse, allow or quarantine"),
    ])
    func serveRefusesEventsAndReviewsItCouldNeverUse(arguments: [String], message: String) async throws {
        let data = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: data) }
        let serve = try BackgroundCommand(
            ["serve", "--port", "0", "--data", data.path] + arguments,
            environment: ["PHOTOPREP_JWT_SECRET": String(repeating: "k", count: 32), "PHOTOPREP_EVENTS_SECRET": "whsec_c2hvcnQ="])
        let result = await serve.wait(timeout: 30)
        serve.crash()
        #expect(result?.status != 0 && result?.stderr.contains(message) == true, "\(String(describing: result))")
    }
}
