import Foundation
import Testing
import TestSupport
@testable import PhotoServer

/// The app's backend asked before an upload is created (`--hook-url`): a real receiver on 127.0.0.1
/// (`hook_receiver.py`) that accepts, refuses, is slow, fails or answers garbage — and a port nobody listens on.
@Suite struct ServeHookTests {
    /// A receiver and the file it records each request in, one line each.
    struct Receiver {
        let process: ServerProcess
        let record: URL

        /// `script`: the receiver in Tests/TestSupport/Support/ (`hook_receiver.py`, `review_receiver.py`).
        static func start(_ script: String = "hook_receiver.py") async throws -> Receiver {
            let record = try temporaryFolder().appendingPathComponent("hook.jsonl")
            let script = projectFolder.appendingPathComponent("Tests/TestSupport/Support/\(script)").path
            let port = ServerProcess.freePort()
            let process = try await onThread { try ServerProcess(port: port, executable: "python3", arguments: [script, String(port), record.path]) }
            return Receiver(process: process, record: record)
        }

        func url(_ path: String) -> String { "http://127.0.0.1:\(process.port)/\(path)" }

        var requests: [[String: Any]] {
            ((try? String(contentsOf: record, encoding: .utf8)) ?? "").split(separator: "\n")
                .compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        }
    }

    static func unfinished(_ server: SeededRouter) async throws -> Int { try await server.server.uploads.store.unfinished().count }

    /// Accepted: the upload is created and finishes; the hook was told the caller, the key, the length and the metadata.
    @Test func anAcceptedUploadIsCreatedAndTheHookWasToldWhatItWouldBe() async throws {
        let receiver = try await Receiver.start()
        try await SeededRouter.run(configure: { $0.creationHook = CreationHook(url: receiver.url("accept")) }) { server in
            let token = TestTokens.hs256(sub: "u1", claims: ["name": "Ana"])
            let photo = try Fixture.bytes("orientation/landscape_1.jpg")
            let key = "user_photos/u1/trip/a.jpg"
            let created = try await ServeRulesTests.create(
                server, key: key, length: photo.count, token: token, extra: ["Upload-Metadata": ServeRulesTests.metadata(key) + ",filename YS5qcGc="])
            let location = try #require(created.header("Location"), "\(created)")
            #expect(try await ServeRulesTests.patch(server, location, offset: 0, body: photo, token: token).status == 204)
            let asked = receiver.requests
            #expect(asked.count == 1)
            let body = try #require(asked.first?["body"] as? [String: Any])
            #expect(asked.first?["contentType"] as? String == "application/json")
            #expect(body["type"] as? String == "upload.create")
            #expect((body["caller"] as? [String: Any])?["id"] as? String == "u1" && (body["caller"] as? [String: Any])?["name"] as? String == "Ana", "\(body)")
            let upload = try #require(body["upload"] as? [String: Any])
            #expect(upload["key"] as? String == key && upload["length"] as? Int == photo.count, "\(upload)")
            #expect((upload["metadata"] as? [String: String])?["filename"] == "a.jpg", "\(upload)")
        }
    }

    /// Refused: the client gets the hook's status and message (403 when it gave none), nothing is created, and the
    /// refusal is counted as the hook's.
    @Test(arguments: [("refuse", 451, "no photos of that, Ana"), ("refuse-plain", 403, "the upload was refused")])
    func aRefusalReachesTheClientAsTheHookSaidIt(path: String, status: Int, message: String) async throws {
        let receiver = try await Receiver.start()
        try await SeededRouter.run(configure: { $0.creationHook = CreationHook(url: receiver.url(path)) }) { server in
            let token = TestTokens.hs256(sub: "u1")
            let created = try await ServeRulesTests.create(server, key: "user_photos/u1/trip/a.jpg", length: 1000, token: token)
            #expect(created.status == status && created.body.trimmingCharacters(in: .newlines) == message, "\(created)")
            #expect(try await Self.unfinished(server) == 0)
            let metrics = try await server.send("GET", "/metrics")
            #expect(metrics.body.contains(#"photoprep_rule_refusals_total{reason="hook"} 1"#), "\(metrics.body)")
        }
    }

    /// A hook that cannot be asked — nobody listening, 500, the connection reset, not JSON, slower (60 s) than its 1 s
    /// timeout — refuses by default: 503 with `Retry-After`, a body naming neither the hook nor its host, nothing
    /// created, the reason logged and counted; with `--hook-failure allow` the upload is created all the same.
    @Test(arguments: ["down", "error", "reset", "garbage", "slow"])
    func aHookThatCannotBeAskedRefusesOrAllowsAsSet(failure: String) async throws {
        let receiver = try await Receiver.start()
        let url = failure == "down" ? "http://127.0.0.1:\(ServerProcess.freePort())/accept" : receiver.url(failure)
        for policy in CreationHook.Failure.allCases {
            try await SeededRouter.run(configure: { $0.creationHook = CreationHook(url: url, timeout: .seconds(1), onFailure: policy) }) { server in
                let started = ContinuousClock.now
                let created = try await ServeRulesTests.create(server, key: "user_photos/u1/trip/a.jpg", length: 1000, token: TestTokens.hs256(sub: "u1"))
                #expect(ContinuousClock.now - started < .seconds(30), "answered in bounded time, not after the slow receiver's 60 s")
                switch policy {
                case .refuse:
                    #expect(created.status == 503 && created.header("Retry-After") == "5", "\(created)")
                    #expect(!created.body.contains("127.0.0.1") && !created.body.contains(failure), "\(created.body)")
                    #expect(try await Self.unfinished(server) == 0)
                case .allow:
                    #expect(created.status == 201, "\(created)")
                    #expect(try await Self.unfinished(server) == 1)
                }
                #expect(server.log.contains("the upload hook failed") && server.log.contains("policy=\(policy.rawValue)"), "\(server.log)")
                let metrics = try await server.send("GET", "/metrics")
                #expect(metrics.body.contains("photoprep_hook_failures_total 1"), "\(metrics.body)")
            }
        }
    }

    /// `photoprep serve` refuses a hook it could never ask, naming the flag, before it starts.
    @Test func serveRefusesAHookURLThatIsNotHTTP() async throws {
        let data = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: data) }
        let serve = try BackgroundCommand(["serve", "--port", "0", "--data", data.path, "--hook-url", "ftp://hooks.example.com"], environment: ["PHOTOPREP_JWT_SECRET": String(repeating: "k", count: 32)])
        let result = await serve.wait(timeout: 30)
        serve.crash()
        #expect(result?.status != 0 && result?.stderr.contains("--hook-url ftp://hooks.example.com: an http:// or https:// URL") == true, "\(String(describing: result))")
    }
}
