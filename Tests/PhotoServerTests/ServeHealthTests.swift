import Foundation
import Testing
import TestSupport
@testable import PhotoServer

/// `/health/live` and `/health/ready` (and `/health`), with what the server stands on failing for real (on its router
/// in the test's process where no process is needed): a storage folder that cannot be made, a storage file system that
/// fills up (a tmpfs) and gets room again, a PostgreSQL connection that stops answering (its relay stopped with SIGSTOP,
/// past the server's statement deadline) and answers again. Every probe is answered at once whatever the dependency
/// does, names no path, and readiness comes back without a restart.
@Suite struct ServeHealthTests {
    static let ok = "{\"status\":\"ok\",\"database\":\"ok\",\"storage\":\"ok\"}\n"
    static let noAnswer = "{\"status\":\"unavailable\",\"database\":\"no answer\",\"storage\":\"ok\"}\n"

    /// `path`'s answer once a probe has answered in time: in a test process running hundreds of tests, a probe can
    /// outlive its 2 s bound and read "no answer", which `serve`'s readiness loop replaces with the next probe's
    /// answer; on the router the test probes again as that loop would (at most ten times).
    static func answered(_ server: SeededRouter, _ path: String = "/health/ready") async throws -> HTTPExchange {
        var answer = try await server.send("GET", path)
        for _ in 0..<10 where answer.body.contains("no answer") {
            await server.server.readiness.probe()
            answer = try await server.send("GET", path)
        }
        return answer
    }

    @Test func liveAndReadyOnAHealthyServer() async throws {
        try await SeededRouter.run { server in
            let live = try await server.send("GET", "/health/live")
            #expect(live.status == 200 && live.body == "{\"status\":\"ok\"}\n", "\(live)")
            for path in ["/health/ready", "/health"] {
                let ready = try await Self.answered(server, path)
                #expect(ready.status == 200 && ready.body == Self.ok && ready.header("Retry-After") == nil, "\(path): \(ready)")
                #expect(ready.header("Cache-Control") == "no-store")
            }
        }
    }

    @Test func storageThatCannotBeMadeIsNotReady() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("not-a-folder")
        try Data("x".utf8).write(to: file)
        try await SeededRouter.run(configure: { $0.storage = file.appendingPathComponent("storage").absoluteString }) { server in
            let ready = try await Self.answered(server)
            #expect(ready.status == 503 && ready.header("Retry-After") != nil, "\(ready)")
            #expect(ready.body == "{\"status\":\"unavailable\",\"database\":\"ok\",\"storage\":\"unavailable\"}\n", "\(ready)")
            #expect(!ready.body.contains(folder.path), "no path in the answer")
            #expect(try await server.send("GET", "/health/live").status == 200, "alive: no restart would help")
            #expect(server.log.contains("not ready: storage unavailable") && server.log.contains(file.path), "the detail is in the log")
        }
    }

    @Test(.enabled(if: geteuid() == 0, "mounting a tmpfs needs root"))
    func storageThatFillsUpIsNotReadyUntilItHasRoom() async throws {
        let folder = try temporaryFolder()
        let storage = folder.appendingPathComponent("storage")
        try FileManager.default.createDirectory(at: storage, withIntermediateDirectories: true)
        // 16 MiB: under the 64 MiB the storage keeps in reserve.
        let mounted = try await runSupportCommand("mount", ["-t", "tmpfs", "-o", "size=16m", "tmpfs", storage.path])
        try #require(mounted.status == 0, "\(mounted)")
        defer {
            // Lazily: a server still holding a file there does not keep it mounted.
            _ = try? runSupportCommandBlocking("umount", ["-l", storage.path])
            try? FileManager.default.removeItem(at: folder)
        }
        let server = try await onThread { try PhotoServerProcess(arguments: ["--to", storage.path]) }
        let full = try await HTTPExchange.send("GET", server.base + "/health")
        #expect(full.status == 503 && full.body == "{\"status\":\"unavailable\",\"database\":\"ok\",\"storage\":\"full\"}\n", "\(full)")
        #expect(server.log.contains("not ready: storage full"))
        // Room again (the file system grown under the running server): ready at the next probe, no restart.
        let grown = try await runSupportCommand("mount", ["-o", "remount,size=256m", storage.path])
        try #require(grown.status == 0, "\(grown)")
        let recovered = try await Self.poll(server, until: 200)
        #expect(recovered.answer.body == Self.ok)
        #expect(server.log.contains("ready again: storage answers"))
    }

    @Test func aDatabaseThatStopsAnsweringIsNotReadyAndTheProbeDoesNotWait() async throws {
        let (relay, server) = try await SeededServer.relayedPostgres()
        #expect(try await HTTPExchange.send("GET", server.base + "/health/ready").body == Self.ok)

        // The database's connections hang (nothing closed, nothing answered): not ready within a probe's timeout
        // and interval, and every probe of the health routes answered at once meanwhile.
        kill(relay.processIdentifier, SIGSTOP)
        defer { kill(relay.processIdentifier, SIGCONT) }
        let hung = try await Self.poll(server, until: 503)
        #expect(hung.answer.body == Self.noAnswer, "\(hung.answer)")
        #expect(hung.answer.header("Retry-After") != nil)
        // Answered at all while the database hangs is the point (a route that waited for it would not answer
        // until SIGCONT); the bound is loose because the machine may be busy with other tests.
        #expect(hung.slowest < .seconds(10), "the slowest probe answered in \(hung.slowest)")
        #expect(try await HTTPExchange.send("GET", server.base + "/health/live").status == 200)

        // Hung past the server's statement deadline (10 s): the probe's connection is closed, and the probes
        // after it meet connections closed the same way or connects that get no answer either. Still no answer,
        // and none of those connections may be used again once the database is back.
        try await waitUntil(seconds: 30) { server.log.contains("not ready: database no answer") }
        try await Task.sleep(for: .seconds(3))
        let longer = try await HTTPExchange.send("GET", server.base + "/health/ready")
        #expect(longer.status == 503 && longer.body == Self.noAnswer, "\(longer)")

        // The connections flow again: ready again, without a restart.
        kill(relay.processIdentifier, SIGCONT)
        let back = try await Self.poll(server, until: 200)
        #expect(back.answer.body == Self.ok, "\(back)")
    }

    /// Asks `/health/ready` every 100 ms until it answers `status` (at most 30 s); the answer and the
    /// slowest of the exchanges on the way.
    static func poll(_ server: PhotoServerProcess, until status: Int) async throws -> (answer: HTTPExchange, slowest: Duration) {
        var slowest = Duration.zero
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            let started = ContinuousClock.now
            let answer = try await HTTPExchange.send("GET", server.base + "/health/ready")
            slowest = max(slowest, ContinuousClock.now - started)
            if answer.status == status { return (answer, slowest) }
            guard ContinuousClock.now < deadline else { throw TestSetupError(message: "/health/ready still \(answer.status) \(answer.body) after 30 s") }
            try await Task.sleep(for: .milliseconds(100))
        }
    }
}
