import Foundation
import SQLKit
import PhotoServices
import PhotoUpload
import Testing
import TestSupport

/// The services against a real tus server on 127.0.0.1 that enforces the storage rules itself
/// (tuspyserver + Support/rules_app.py, reading group admins from the services' SQLite file).
@Suite(.serialized) struct RemoteStorageTests {
    static let secret = TestTokens.secret
    /// The command takes the signed-in user's token from the environment (never a command-line argument).
    static let environment = ["PHOTOPREP_TOKEN": TestTokens.hs256(sub: "u1")]

    /// The Python rules server reads group admins from the services' SQLite file: the tests that use it run
    /// on SQLite only (the services' own rules run on both databases in the other suites).
    static let rulesServerReadsSQLite: Comment = "the Python rules server reads the SQLite file"

    func rulesServer(_ h: Harness, port: Int? = nil) throws -> TuspyServer {
        try TuspyServer(app: "rules_app", environment: ["RULES_SECRET": Self.secret, "RULES_DB": h.databasePath], port: port)
    }

    func fixed(_ chunk: Int, retry: Duration = .seconds(30)) -> UploadConfiguration {
        var c = UploadConfiguration()
        c.chunkSize = chunk
        c.maxChunkSize = chunk
        c.maxRetryDuration = retry
        // A server the test started is there: a loaded machine (the whole suite on 2 cores) may answer its first
        // request slowly, which must not read as "unreachable". Tests of unreachability pass a short `retry`.
        if retry >= .seconds(30) {
            c.firstContactDuration = retry
            c.requestTimeout = retry
        }
        c.initialBackoff = .milliseconds(50)
        c.maxBackoff = .milliseconds(300)
        return c
    }

    @Test(.enabled(if: !PostgresCluster.selected, Self.rulesServerReadsSQLite)) func theGroupPhotoGoesToTheServerUnderTheRules() async throws {
        let folder = try temporaryFolder()
        let port = ServerProcess.freePort()
        let h = try await Harness(destination: "http://127.0.0.1:\(port)/files/", upload: fixed(256 * 1024, retry: .seconds(120)), folder: folder)
        let server = try rulesServer(h, port: port)
        let created = try await h.services.groups.createGroup(
            creator: "u1", name: "g", participants: ["u2", "u3"], photo: .file(Fixture.path("photos/ladybird-2560x1600.jpg")))
        let job = try await h.services.jobs.wait(try #require(created.photoJob))
        #expect(job.state == .done, "\(job.error ?? "")")
        let url = try #require(job.url)
        let stored = try #require(server.stored(url))
        #expect(stored.count < 500 * 1024)
        #expect(try decodedSize(stored) == (2048, 1280))
        #expect(try await h.services.photos.location(of: "group_photos/\(created.group.id)/photo.jpg") == url)

        // The profile picture with u2's token, then a replacement: the first one is deleted on the server.
        let first = try await h.services.jobs.wait(try await h.services.profiles.setProfilePhoto(caller: "u2", photo: .file(Fixture.path("photos/storm-1920x1280.jpg"))))
        #expect(first.state == .done, "\(first.error ?? "")")
        #expect(server.stored(try #require(first.url)) != nil)
        let second = try await h.services.jobs.wait(try await h.services.profiles.setProfilePhoto(caller: "u2", photo: .file(Fixture.path("photos/ladybird-2560x1600.jpg"))))
        #expect(second.state == .done)
        var gone = false
        for _ in 0..<100 where !gone {
            gone = server.stored(first.url!) == nil
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(gone, "the replaced picture was deleted on the server")
    }

    /// Requests the services would never send, forged with the uploader: the server refuses each,
    /// as the service-side rules do, and the client reports it clearly.
    @Test(.enabled(if: !PostgresCluster.selected, Self.rulesServerReadsSQLite)) func forgedRequestsAreRefusedByTheServerToo() async throws {
        let h = try await Harness()
        let server = try rulesServer(h)
        let created = try await h.services.groups.createGroup(creator: "u1", name: "g", participants: ["u2", "u3"])
        let group = created.group.id
        // Refusals fail at once (4xx are not retried); the budget is generous so that a slow, loaded machine
        // does not fail the one allowed upload (every request stays inside the budget).
        let uploader = try Uploader(destination: server.endpoint, configuration: fixed(256 * 1024, retry: .seconds(30)))
        let jpeg = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Fixture.path("photos/storm-1920x1280.jpg"))))

        let cases: [(caller: String?, key: String, type: String, bytes: [UInt8], status: Int)] = [
            ("u2", "profile_images/u1/x.jpg", "image/jpeg", jpeg, 403),  // another user's folder
            ("u2", "user_photos/u1/trip/x.jpg", "image/jpeg", jpeg, 403),
            ("u2", "group_photos/\(group)/photo.jpg", "image/jpeg", jpeg, 403),  // not an admin
            ("u1", "profile_images/u1/../u2/x.jpg", "image/jpeg", jpeg, 403),  // path trick
            ("u1", "elsewhere/x.jpg", "image/jpeg", jpeg, 403),
            ("u1", "profile_images/u1/x.png", "image/png", jpeg, 415),
            ("u1", "profile_images/u1/big.jpg", "image/jpeg", jpeg + [UInt8](repeating: 0, count: 5 * 1024 * 1024), 413),
            (nil, "profile_images/u1/x.jpg", "image/jpeg", jpeg, 401),  // no token
        ]
        for c in cases {
            let authorization = c.caller.map { Harness.authorization(for: $0) }
            let result = await uploader.upload(.bytes(c.bytes), request: UploadRequest(key: c.key, contentType: c.type, authorization: authorization)).result()
            guard case .failed(let error) = result else { Issue.record("\(c.key) as \(c.caller ?? "nobody"): \(result)"); continue }
            #expect(error.status == c.status, "\(c.key) as \(c.caller ?? "nobody"): \(error)")
            if c.status == 401 || c.status == 403 { #expect(error.kind == .notAuthorized) }
            // The service-side rules give the same verdict before any byte leaves.
            if let caller = c.caller, c.status == 403 {
                let verdict = Result { () throws(ServiceError) in
                    try StorageRules.authorize(caller: caller, writing: try StoragePath(key: c.key)) { g in g == group && caller == "u1" }
                }
                #expect((try? verdict.get()) == nil, "the service refuses \(c.key) for \(caller) as well")
            }
        }
        // A wrong signature is refused too; the admin's own request goes through.
        let forgedToken = "Bearer u1.AAAA"
        let forged = await uploader.upload(.bytes(jpeg), request: UploadRequest(key: "profile_images/u1/x.jpg", authorization: forgedToken)).result()
        guard case .failed(let error) = forged else { Issue.record("\(forged)"); return }
        #expect(error.status == 401)
        let allowed = await uploader.upload(
            .bytes(jpeg), request: UploadRequest(key: "group_photos/\(group)/photo.jpg", authorization: Harness.authorization(for: "u1"))).result()
        guard case .finished(let location) = allowed else { Issue.record("\(allowed)"); return }
        #expect(server.stored(location) == jpeg)
    }

    @Test(.enabled(if: !PostgresCluster.selected, Self.rulesServerReadsSQLite)) func aCancelledPhotoIsRetriedWithoutRecreatingTheGroup() async throws {
        let folder = try temporaryFolder()
        let upstreamPort = ServerProcess.freePort()
        let server = try TuspyServer(app: "rules_app", environment: ["RULES_SECRET": Self.secret, "RULES_DB": folder.appendingPathComponent("app.sqlite").path], port: upstreamPort)
        let proxy = try FaultProxy(upstream: upstreamPort, faults: ["--delay-data", "0.05"])
        let h = try await Harness(destination: proxy.endpoint, upload: fixed(32 * 1024), folder: folder)
        let created = try await h.services.groups.createGroup(
            creator: "u1", name: "g", participants: ["u2", "u3"], photo: .file(Fixture.path("photos/storm-1920x1280.jpg")))
        let job = try #require(created.photoJob)
        var cancelled = false
        for await event in await h.services.jobs.events(job) {
            if case .progress(let p) = event, p.acknowledged >= 64 * 1024, !cancelled {
                cancelled = true
                try await h.services.jobs.cancel(job)
            }
        }
        #expect(cancelled)
        #expect(try await h.services.jobs.wait(job).state == .cancelled)
        #expect(try await h.services.groups.group(created.group.id)?.photoState == .cancelled)
        let partials = try FileManager.default.contentsOfDirectory(atPath: server.folder.path).filter { !$0.hasPrefix(".") && !$0.hasSuffix(".info") }
        #expect(partials.isEmpty, "the partial upload was deleted on the server: \(partials)")

        try await h.services.jobs.retry(job)
        let done = try await h.services.jobs.wait(job)
        #expect(done.state == .done, "\(done.error ?? "")")
        #expect(done.attempts == 2)
        let counts = (try await h.count("chatGroup"), try await h.count("message"), try await h.count("notification"))
        #expect(counts == (1, 1, 2), "the group was not created again")
        let url = try #require(done.url)
        let stored = try #require(server.stored(url))
        #expect(try decodedSize(stored) == (1920, 1280))
    }

    @Test(.enabled(if: !PostgresCluster.selected, Self.rulesServerReadsSQLite)) func aServerDownAtCreationGetsThePhotoLaterBySync() async throws {
        let folder = try temporaryFolder()
        let port = ServerProcess.freePort()  // nothing listens here yet
        let h = try await Harness(destination: "http://127.0.0.1:\(port)/files/", upload: fixed(256 * 1024, retry: .seconds(1)), folder: folder)
        let created = try await h.services.groups.createGroup(
            creator: "u1", name: "offline", participants: ["u2", "u3"], photo: .file(Fixture.path("photos/ladybird-2560x1600.jpg")))
        let job = try await h.services.jobs.wait(try #require(created.photoJob))
        #expect(job.state == .pending, "kept for later: \(job.error ?? "")")
        let group = try #require(try await h.services.groups.group(created.group.id))
        #expect(group.photoState == .pending && group.photoError?.contains("unreachable") == true, "\(group)")

        // A new process (new services on the same folder) once the server is back.
        let server = try rulesServer(h, port: port)
        let later = try await Harness(users: 0, destination: h.destination, upload: fixed(256 * 1024), folder: folder)
        let synced = await later.services.jobs.sync()
        #expect(synced.map(\.state) == [.done])
        #expect(await later.services.jobs.sync().isEmpty, "nothing left: a second sync uploads nothing")
        let uploads = try FileManager.default.contentsOfDirectory(atPath: server.folder.path).filter { !$0.hasPrefix(".") && !$0.hasSuffix(".info") }
        #expect(uploads.count == 1, "uploaded exactly once: \(uploads)")
        #expect(try await later.services.photos.location(of: "group_photos/\(created.group.id)/photo.jpg") == synced.first?.url)
    }

    /// The background loop picks a pending photo up once the server is back; an explicit `retry()` does too.
    @Test(.enabled(if: !PostgresCluster.selected, Self.rulesServerReadsSQLite)) func theBackgroundLoopAndRetryUploadPendingPhotos() async throws {
        let folder = try temporaryFolder()
        let port = ServerProcess.freePort()
        let h = try await Harness(destination: "http://127.0.0.1:\(port)/files/", upload: fixed(256 * 1024, retry: .milliseconds(300)), folder: folder)
        let a = try await h.services.groups.createGroup(creator: "u1", name: "a", participants: ["u2", "u3"], photo: .file(Fixture.path("photos/storm-1920x1280.jpg")))
        let b = try await h.services.profiles.setProfilePhoto(caller: "u2", photo: .file(Fixture.path("photos/ladybird-2560x1600.jpg")))
        #expect(try await h.services.jobs.wait(try #require(a.photoJob)).state == .pending)
        #expect(try await h.services.jobs.wait(b).state == .pending)

        let server = try rulesServer(h, port: port)
        // Services on the same folder with the usual budget: 300 ms (and 1 s a request) is for finding nothing there,
        // not for a server on a loaded machine.
        let online = try await Harness(users: 0, destination: h.destination, upload: fixed(256 * 1024), folder: folder)
        try await online.services.jobs.retry(b)
        #expect(try await online.services.jobs.wait(b).state == .done)
        // The runner service (as `photoprep serve` runs it) picks the pending photo up.
        var state = PhotoState.pending
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await PhotoJobRunner(jobs: online.services.jobs, mode: .continuous(every: .milliseconds(200))).run() }
            for _ in 0..<600 where state != .done {
                try await Task.sleep(for: .milliseconds(100))
                state = try #require(try await online.services.groups.group(a.group.id)).photoState
            }
            group.cancelAll()
        }
        #expect(state == .done)
        let uploads = try FileManager.default.contentsOfDirectory(atPath: server.folder.path).filter { !$0.hasPrefix(".") && !$0.hasSuffix(".info") }
        #expect(uploads.count == 2)
    }

    /// Two `photoprep sync` processes started together on the same pending photo: it is uploaded once.
    @Test func twoSyncProcessesUploadAPendingPhotoOnce() async throws {
        let folder = try temporaryFolder()
        let data = folder.appendingPathComponent("data")
        let upstreamPort = ServerProcess.freePort()
        let proxyPort = ServerProcess.freePort()
        let common = ["--data", data.path, "--to", "http://127.0.0.1:\(proxyPort)/files/", ]
        for id in ["u1", "u2", "u3"] { #expect(try await photoprep(["user", "add", id, "--name", id] + common, environment: Self.environment).status == 0) }
        let created = try await photoprep(["group", "create", "--as", "u1", "--name", "g", "--participant", "u2", "--participant", "u3",
                                     "--photo", Fixture.path("photos/storm-1920x1280.jpg"), "--retry-seconds", "0"] + common, environment: Self.environment)
        #expect(created.status == 1 && created.stderr.contains("pending"), "\(created.stderr)")

        let server = try TuspyServer(app: "rules_app", environment: ["RULES_SECRET": Self.secret, "RULES_DB": data.appendingPathComponent("app.sqlite").path], port: upstreamPort)
        let proxy = try FaultProxy(upstream: upstreamPort, faults: ["--delay-data", "0.05"], port: proxyPort)
        let syncs = try (0..<2).map { _ in
            let p = Process()
            p.executableURL = photoprepBinary
            p.arguments = ["sync", "--chunk-size", "64KiB"] + common
            p.environment = ProcessInfo.processInfo.environment.merging(Self.environment) { $1 }
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            try launch(p)
            return p
        }
        try await onThread { for p in syncs { p.waitUntilExit() } }
        // One uploads it; the other finds it being uploaded (exit 1) — or, if it started late, done (exit 0).
        #expect(syncs.contains { $0.terminationStatus == 0 } && syncs.allSatisfy { [0, 1].contains($0.terminationStatus) })
        #expect(proxy.requests["POST"] == 1, "one upload: \(proxy.requests)")
        let uploads = try FileManager.default.contentsOfDirectory(atPath: server.folder.path).filter { !$0.hasPrefix(".") && !$0.hasSuffix(".info") }
        #expect(uploads.count == 1)
        #expect(try await photoprep(["sync"] + common, environment: Self.environment).stdout.contains("0 of 0 pending photos uploaded"))
    }

    /// A photo kept pending goes where it was headed when its group was created (`--to` then), whatever a
    /// later `photoprep sync` is given: without `--to` it goes there; with another `--to` it is left, and said.
    @Test func aPendingPhotoGoesWhereItWasHeaded() async throws {
        let folder = try temporaryFolder()
        let data = folder.appendingPathComponent("data")
        let port = ServerProcess.freePort()
        let headed = ["--data", data.path, "--to", "http://127.0.0.1:\(port)/files/"]
        for id in ["u1", "u2", "u3"] { #expect(try await photoprep(["user", "add", id, "--name", id] + headed, environment: Self.environment).status == 0) }
        let created = try await photoprep(["group", "create", "--as", "u1", "--name", "g", "--participant", "u2", "--participant", "u3",
                                     "--photo", Fixture.path("photos/storm-1920x1280.jpg"), "--retry-seconds", "0"] + headed, environment: Self.environment)
        #expect(created.status == 1 && created.stderr.contains("pending"), "\(created.stderr)")

        let other = folder.appendingPathComponent("other")
        let elsewhere = try await photoprep(["sync", "--data", data.path, "--to", other.absoluteString, "--retry-seconds", "0"], environment: Self.environment)
        #expect(elsewhere.status == 1 && elsewhere.stderr.contains("go elsewhere (http://127.0.0.1:\(port)/files/)"), "\(elsewhere.stderr)")
        let stillDown = try await photoprep(["sync", "--data", data.path, "--retry-seconds", "0"], environment: Self.environment)
        #expect(stillDown.status == 1 && stillDown.stderr.contains("127.0.0.1:\(port)"), "tried where it was headed: \(stillDown.stderr)")
        #expect(!FileManager.default.fileExists(atPath: other.path) && !FileManager.default.fileExists(atPath: data.appendingPathComponent("storage/group_photos").path))

        let server = try TuspyServer(app: "rules_app", environment: ["RULES_SECRET": Self.secret, "RULES_DB": data.appendingPathComponent("app.sqlite").path], port: port)
        let synced = try await photoprep(["sync", "--data", data.path], environment: Self.environment)
        #expect(synced.status == 0 && synced.stdout.contains("uploaded → http://127.0.0.1:\(port)/files/"), "\(synced.stdout)\(synced.stderr)")
        let uploads = try FileManager.default.contentsOfDirectory(atPath: server.folder.path).filter { !$0.hasPrefix(".") && !$0.hasSuffix(".info") }
        #expect(uploads.count == 1)
        #expect(!FileManager.default.fileExists(atPath: data.appendingPathComponent("storage/group_photos").path), "nothing in the default store")
    }

    /// `photoprep group create` killed (SIGKILL) while its photo uploads; `photoprep sync` in a new
    /// process finishes the photo from where the server stopped, and the group exists once.
    @Test func aKilledProcessIsCompletedBySyncInANewProcess() async throws {
        let folder = try temporaryFolder()
        let data = folder.appendingPathComponent("data")
        let upstreamPort = ServerProcess.freePort()
        let database = data.appendingPathComponent("app.sqlite").path
        let server = try TuspyServer(app: "rules_app", environment: ["RULES_SECRET": Self.secret, "RULES_DB": database], port: upstreamPort)
        // The proxy holds the upload once 3 chunks were accepted, until the test has killed the process:
        // the kill lands half-way however loaded the machine is.
        let chunk = 32 * 1024
        let resume = folder.appendingPathComponent("resume")
        let proxy = try FaultProxy(upstream: upstreamPort, faults: ["--pause-after-bytes", String(3 * chunk), "--resume-file", resume.path])
        // A short lease: the sync takes the dead process's job over 2 s after its last renewal.
        let common = ["--data", data.path, "--to", proxy.endpoint, "--job-lease", "2"]
        for (id, name) in [("u1", "Ana"), ("u2", "Ben"), ("u3", "Cy")] {
            #expect(try await photoprep(["user", "add", id, "--name", name] + common, environment: Self.environment).status == 0)
        }
        let child = Process()
        child.executableURL = photoprepBinary
        child.arguments = ["group", "create", "--as", "u1", "--name", "Killed", "--participant", "u2", "--participant", "u3",
                           "--photo", Fixture.path("photos/storm-1920x1280.jpg"), "--chunk-size", String(chunk), "--json"] + common
        child.environment = ProcessInfo.processInfo.environment.merging(Self.environment) { $1 }
        child.standardOutput = FileHandle.nullDevice
        child.standardError = FileHandle.nullDevice
        try launch(child)
        let reader = try await AppDatabase(path: database)
        var offset = 0
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, offset < 3 * chunk {
            try await Task.sleep(for: .milliseconds(20))
            offset = proxy.dataBytes
        }
        kill(child.processIdentifier, SIGKILL)
        child.waitUntilExit()
        _ = FileManager.default.createFile(atPath: resume.path, contents: nil)
        let killed = try #require(try await reader.all(PhotoJob.self, from: "photoJob").first)
        #expect(killed.state == .uploading, "killed half-way")
        #expect(killed.uploadLocation?.hasPrefix(proxy.endpoint) == true, "the database knows the upload's location")
        #expect(killed.uploadedBytes > 0)

        let sync = try await photoprep(["sync"] + common, environment: Self.environment)
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(sync.stdout.contains("1 of 1 pending photos uploaded"), "\(sync.stdout)")
        let groups = try await reader.count("chatGroup")
        let job = try #require(try await reader.all(PhotoJob.self, from: "photoJob").first)
        #expect(groups == 1)
        #expect(job.state == .done)
        #expect(try await JobStore(database: reader).runs(of: job.id).count == 2, "two holdings: the killed one (its lease expired), then the sync's")
        let stored = try #require(server.stored(job.url ?? ""))
        #expect(try decodedSize(stored) == (1920, 1280))
        #expect(proxy.requests["POST"] == 1, "the upload was continued, not started again")
        #expect(proxy.dataBytes <= stored.count + chunk, "re-sent \(proxy.dataBytes - stored.count) bytes")
    }

    /// A replaced profile picture whose deletion fails is retried, then kept and reported (`staleObjects()`),
    /// never forgotten; `sync()` deletes it once the destination lets it.
    @Test func aReplacedPictureThatCannotBeDeletedIsKeptAndDeletedBySync() async throws {
        let server = try TusServer()
        let proxy = try FaultProxy(upstream: server.port, faults: ["--fail-delete", "3"])
        let h = try await Harness(destination: proxy.endpoint, upload: fixed(256 * 1024))
        let first = try await h.services.jobs.wait(try await h.services.profiles.setProfilePhoto(caller: "u1", photo: .file(Fixture.path("photos/storm-1920x1280.jpg"))))
        let old = try #require(first.url)
        let second = try await h.services.jobs.wait(try await h.services.profiles.setProfilePhoto(caller: "u1", photo: .file(Fixture.path("photos/ladybird-2560x1600.jpg"))))
        #expect(second.state == .done)
        let key = try #require(try await h.services.users.user("u1")?.profilePhotoKey)
        #expect(try await h.services.photos.location(of: key) == second.url)
        // Three refused DELETEs: the old picture is still there, and the services say so.
        #expect(proxy.requests["DELETE"] == 3)
        let stale = try await h.services.jobs.staleObjects()
        #expect(stale.map(\.url) == [old] && stale.first?.caller == "u1" && stale.first?.attempts == 3)
        #expect(stale.first?.error.contains("503") == true, "\(stale)")
        let oldOnServer = old.replacingOccurrences(of: String(proxy.server.port), with: String(server.port))
        #expect(try await download(oldOnServer).isEmpty == false)

        await h.services.jobs.sync()
        #expect(try await h.services.jobs.staleObjects().isEmpty)
        #expect(proxy.requests["DELETE"] == 4)
        let gone = await #expect(throws: TestSetupError.self) { try await download(oldOnServer) }
        #expect(gone?.message.contains("404") == true, "deleted, not unreachable: \(String(describing: gone))")
        #expect(try await download(try #require(second.url).replacingOccurrences(of: String(proxy.server.port), with: String(server.port))).isEmpty == false)
    }
}
