import Foundation
import Testing
import TestSupport

/// A database that stops answering (the PostgreSQL connection's relay stopped with SIGSTOP) while a photo is
/// finishing: the request is answered 503 within the statement deadline, SIGTERM still ends the server within
/// `--shutdown-grace` plus the 5 s cancellation bound, and nothing acknowledged is lost — with the database back,
/// asking the upload's offset finishes it.
@Suite struct ServeShutdownBoundTests {
    /// The relay to `cluster`'s PostgreSQL, and a server whose database is reached through it.
    static func relayed(_ arguments: [String] = []) async throws -> (relay: ServerProcess, server: PhotoServerProcess) {
        let cluster = try await PostgresCluster.shared()
        let url = try await cluster.newDatabase()
        let relayPort = ServerProcess.freePort()
        let relay = try await onThread {
            try ServerProcess(port: relayPort, executable: "python3", arguments: [
                projectFolder.appendingPathComponent("Tests/TestSupport/Support/tcp_relay.py").path, String(relayPort), String(cluster.port),
            ])
        }
        let relayed = url.replacingOccurrences(of: ":\(cluster.port)/", with: ":\(relayPort)/")
        let server = try await onThread { try PhotoServerProcess(arguments: ["--database", relayed] + arguments) }
        return (relay, server)
    }

    /// Asks the offset until it is not 423 or 503 (as tus clients do, at most 30 s).
    static func headUntilAnswered(_ location: String, token: String) async throws -> HTTPExchange {
        var head = try await ServeRulesTests.head(location, token: token)
        let retryUntil = Date().addingTimeInterval(30)
        while [423, 503].contains(head.status) && Date() < retryUntil {
            try await Task.sleep(for: .milliseconds(200))
            head = try await ServeRulesTests.head(location, token: token)
        }
        return head
    }

    @Test func aFinishWhoseDatabaseStopsAnsweringIs503InBoundedTime() async throws {
        let (relay, server) = try await Self.relayed()
        defer { kill(relay.processIdentifier, SIGCONT); server.stop() }
        let token = TestTokens.hs256(sub: "u1", claims: ["name": "Ana"])
        let photo = try Fixture.bytes("photos/storm-1920x1280.jpg")
        let created = try await ServeRulesTests.create(server, key: "profile_images/u1/hung.jpg", length: photo.count, token: token)
        let location = try #require(created.header("Location"), "\(created)")

        kill(relay.processIdentifier, SIGSTOP)
        let started = ContinuousClock.now
        let answer = try await ServeRulesTests.patch(location, offset: 0, body: photo, token: token)
        let took = ContinuousClock.now - started
        #expect(answer.status == 503 && answer.header("Retry-After") == "5", "\(answer)")
        #expect(took < .seconds(25), "answered after \(took): the statement deadline is 10 s")
        #expect(!answer.body.contains("127.0.0.1") && !answer.body.contains("postgres"), "\(answer.body)")

        kill(relay.processIdentifier, SIGCONT)
        let head = try await Self.headUntilAnswered(location, token: token)
        #expect(head.status == 200 && head.header("Upload-Offset") == String(photo.count), "\(head) \(server.log.suffix(3000))")
        #expect(server.stored("profile_images/u1/hung.jpg") != nil)
    }

    @Test func sigtermEndsAServerWhoseFinishIsStuck() async throws {
        let (relay, server) = try await Self.relayed(["--shutdown-grace", "2"])
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
}
