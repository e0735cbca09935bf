import Foundation
import Testing
import TestSupport

/// SIGTERM always ends the server, within `--shutdown-grace` plus the 5 s cancellation bound — also with a
/// photo stuck finishing because its database stopped answering (the PostgreSQL connection's relay stopped with
/// SIGSTOP) — and nothing acknowledged is lost: started again with the database back, the upload's offset asked
/// finishes it.
@Suite struct ServeShutdownBoundTests {
    @Test func sigtermEndsAServerWhoseFinishIsStuck() async throws {
        let cluster = try await PostgresCluster.shared()
        let url = try await cluster.newDatabase()
        let relayPort = ServerProcess.freePort()
        let relay = try await onThread {
            try ServerProcess(port: relayPort, executable: "python3", arguments: [
                projectFolder.appendingPathComponent("Tests/TestSupport/Support/tcp_relay.py").path, String(relayPort), String(cluster.port),
            ])
        }
        defer { kill(relay.processIdentifier, SIGCONT) }
        let relayed = url.replacingOccurrences(of: ":\(cluster.port)/", with: ":\(relayPort)/")
        let server = try await onThread { try PhotoServerProcess(arguments: ["--database", relayed, "--shutdown-grace", "2"]) }
        defer { server.stop() }
        let token = TestTokens.hs256(sub: "u1", claims: ["name": "Ana"])
        let photo = try Fixture.bytes("photos/storm-1920x1280.jpg")
        let key = "profile_images/u1/stuck.jpg"
        let created = try await ServeRulesTests.create(server, key: key, length: photo.count, token: token)
        let location = try #require(created.header("Location"), "\(created)")

        // The database stops answering; the whole photo is sent: prepared and put in storage, its record never written.
        kill(relay.processIdentifier, SIGSTOP)
        let connection = try ServeRulesTests.patchHead(server, location, declaring: photo.count, token: token)
        try connection.send(photo)
        let deadline = Date().addingTimeInterval(30)
        while server.stored(key) == nil && Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }
        try #require(server.stored(key) != nil, "the photo reached storage: \(server.log)")

        let ended = try await onThread { server.terminate(timeout: 60) }
        let took = try #require(ended, "SIGTERM did not end the server in 60 s")
        // The grace (2 s) and the cancellation bound (5 s), with room for a busy machine. Without them the server was
        // still alive after 90 s.
        #expect(took.seconds < 2 + 5 + 5, "ended in \(took.seconds) s: \(server.log.suffix(2000))")
        #expect(took.status == 1 && server.log.contains("shutdown: work still running"), "\(server.log.suffix(2000))")

        // The database back, the server started again: asking the offset finishes the upload (a 423 while the restarted
        // server's sweep is finishing it is asked again, as tus clients do), recorded once.
        kill(relay.processIdentifier, SIGCONT)
        try await onThread { try server.start() }
        var head = try await ServeRulesTests.head(location, token: token)
        let retryUntil = Date().addingTimeInterval(30)
        while head.status == 423 && Date() < retryUntil {
            try await Task.sleep(for: .milliseconds(200))
            head = try await ServeRulesTests.head(location, token: token)
        }
        #expect(head.status == 200 && head.header("Upload-Offset") == String(photo.count), "\(head) \(server.log.suffix(3000))")
        let me = try await ServeAPITests.call(server, "GET", "/v1/me/photo", token: token)
        #expect(me.body["state"] as? String == "ready", "\(me.body)")
    }
}
