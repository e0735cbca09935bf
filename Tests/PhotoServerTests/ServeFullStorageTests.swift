import Foundation
import PhotoPrep
import PhotoUpload
import Testing
import TestSupport

/// A disk that fills up under the built server, for real (a tmpfs mounted under the data folder, then grown): while
/// an upload's bytes arrive, and while its photo is being stored. Each time the client gets 507 with `Retry-After`
/// and a body that names no path, the operator an error-level log line with the system's words and a count in
/// `/metrics`; the acknowledged bytes are kept, and once there is room again the same upload finishes — no restart.
@Suite(.serialized, .enabled(if: geteuid() == 0, "mounting a tmpfs needs root"))
struct ServeFullStorageTests {
    /// Mounts a tmpfs of `size` at `folder` (made first); unmounted lazily at the end of the test.
    static func mountTmpfs(_ folder: URL, size: String) async throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let mounted = try await runSupportCommand("mount", ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", folder.path])
        try #require(mounted.status == 0, "\(mounted)")
    }

    static func grow(_ folder: URL) async throws {
        let grown = try await runSupportCommand("mount", ["-o", "remount,size=64m", folder.path])
        try #require(grown.status == 0, "\(grown)")
    }

    /// The `photoprep_dependency_failures_total` count for `condition`.
    static func failures(_ server: PhotoServerProcess, _ condition: String) async throws -> Int {
        let metrics = try await HTTPExchange.send("GET", "\(server.base)/metrics")
        let line = metrics.body.split(separator: "\n").first { $0.hasPrefix("photoprep_dependency_failures_total{condition=\"\(condition)\"}") }
        return line.flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
    }

    /// Whether the server logged a line at error level that says `detail`.
    static func loggedAsError(_ server: PhotoServerProcess, _ detail: String) -> Bool {
        server.log.split(separator: "\n").contains { $0.contains(" error ") && $0.contains(detail) }
    }

    /// What every answer to a full storage is: 507, Retry-After, no path of the server's.
    static func expectFull(_ answer: HTTPExchange, _ server: PhotoServerProcess, _ what: String, hasBody: Bool = true) {
        #expect(answer.status == 507, "\(what): \(answer)")
        #expect(answer.header("Retry-After") == "60", "\(what): \(answer)")
        #expect(!answer.body.contains(server.data.path) && !answer.body.contains("/tmp"), "\(what): \(answer.body)")
        if hasBody { #expect(answer.body.contains("storage is full"), "\(what): \(answer.body)") }
    }

    @Test func theUploadsDiskFillsWhileBytesArrive() async throws {
        let (data, _) = try await SeededServer.seed()
        let uploads = data.appendingPathComponent("uploads")
        try await Self.mountTmpfs(uploads, size: "1m")
        defer {
            _ = try? runSupportCommandBlocking("umount", ["-l", uploads.path])
            try? FileManager.default.removeItem(at: data)
        }
        let server = try await onThread { try PhotoServerProcess(data: data) }
        let token = TestTokens.hs256(sub: "u1")
        let photo = try Array(Data(contentsOf: URL(fileURLWithPath: try await onThread { BigPhotos.twentyMP })))
        try #require(photo.count > 2 * 1024 * 1024)
        let created = try await ServeRulesTests.create(server, key: "profile_images/u1/full.jpg", length: photo.count, token: token)
        let location = try #require(created.header("Location"), "\(created)")

        let refused = try await ServeRulesTests.patch(location, offset: 0, body: photo, token: token)
        Self.expectFull(refused, server, "PATCH into a full disk")
        #expect(Self.loggedAsError(server, "No space left on device"), "the detail is in the log: \(server.log)")
        #expect(try await Self.failures(server, "full") >= 1)
        // What the server says it holds is what it kept: never more than the file has.
        let held = try await ServeRulesTests.head(location, token: token)
        let offset = try #require(held.header("Upload-Offset").flatMap(Int.init), "\(held)")
        #expect(held.status == 200 && offset < photo.count)

        try await Self.grow(uploads)
        let resumed = try await ServeRulesTests.patch(location, offset: offset, body: Array(photo[offset...]), token: token)
        #expect(resumed.status == 204 && resumed.header("Upload-Offset") == String(photo.count), "\(resumed)")
        _ = try checkNormalised(server.stored("profile_images/u1/full.jpg"), preset: .profile, portrait: true)
    }

    @Test func theStorageFillsWhileThePhotoIsStored() async throws {
        let (data, _) = try await SeededServer.seed()
        let storage = data.appendingPathComponent("storage")
        try await Self.mountTmpfs(storage, size: "1m")
        defer {
            _ = try? runSupportCommandBlocking("umount", ["-l", storage.path])
            try? FileManager.default.removeItem(at: data)
        }
        // Filled to the last byte.
        let filler = storage.appendingPathComponent("filler")
        _ = try await runSupportCommand("dd", ["if=/dev/zero", "of=\(filler.path)", "bs=64k"])
        let server = try await onThread { try PhotoServerProcess(data: data) }
        let token = TestTokens.hs256(sub: "u1")
        let photo = try Array(Data(contentsOf: URL(fileURLWithPath: try await onThread { BigPhotos.twentyMP })))
        let created = try await ServeRulesTests.create(server, key: "profile_images/u1/full.jpg", length: photo.count, token: token)
        let location = try #require(created.header("Location"), "\(created)")

        let refused = try await ServeRulesTests.patch(location, offset: 0, body: photo, token: token)
        Self.expectFull(refused, server, "the last PATCH, its photo not storable")
        #expect(Self.loggedAsError(server, "No space left on device"), "the detail is in the log: \(server.log)")
        // Asked again while still full: the same answer, the bytes still kept.
        Self.expectFull(try await ServeRulesTests.head(location, token: token), server, "HEAD while still full", hasBody: false)
        #expect(try await Self.failures(server, "full") >= 2)

        try FileManager.default.removeItem(at: filler)
        let finished = try await ServeRulesTests.head(location, token: token)
        #expect(finished.status == 200 && finished.header("Upload-Offset") == String(photo.count), "\(finished)")
        _ = try checkNormalised(server.stored("profile_images/u1/full.jpg"), preset: .profile, portrait: true)

        // The API shows the photo by its download URL, never by where the server keeps it.
        let me = try await ServeAPITests.call(server, "GET", "/v1/me", token: token)
        let url = try #require(me.body["profilePhotoURL"] as? String, "\(me.body)")
        #expect(url.hasPrefix(server.base + "/media/profile_images/u1/full.jpg?") && url == me.body["profilePhotoDownloadURL"] as? String)
        #expect(!me.exchange.body.contains(data.path) && !me.exchange.body.contains("file://"))
        let media = try await HTTPExchange.send("GET", url)
        #expect(media.status == 200 && media.header("Referrer-Policy") == "no-referrer", "\(media)")
        let unknown = try await HTTPExchange.send("GET", server.base + "/media/profile_images/u1/none.jpg?v=0&token=0")
        #expect(unknown.status == 404 && unknown.header("Referrer-Policy") == "no-referrer")
    }

    /// A bucket that says it has no room (507, MinIO's `XMinioStorageFull`, from a proxy in front of moto) for the
    /// photo (SQLite: the bytes kept on disk) or for the bytes' own piece (PostgreSQL: uploads shared through the
    /// bucket): the same 507 with `Retry-After: 60`, an error-level log line with the bucket's words and the count;
    /// with room again, the client asks the offset, sends what the server does not hold, and the upload finishes.
    @Test(arguments: ["sqlite", "postgres"])
    func aBucketWithNoRoomIs507(database: String) async throws {
        let bucket = try await BucketServer.start(database: database, faults: ["--fail-507", "1"])
        let server = bucket.server
        defer { server.stop() }
        let photo = try Fixture.bytes("photos/storm-1920x1280.jpg")
        let key = "profile_images/u1/roomless.jpg"
        let (location, token) = try await bucket.newUpload(key, of: photo)

        let answer = try await ServeRulesTests.patch(location, offset: 0, body: photo, token: token)
        Self.expectFull(answer, server, "the bucket full (\(database))", hasBody: true)
        #expect(!answer.body.contains("photos/prod") && !answer.body.contains("127.0.0.1"), "\(answer.body)")
        #expect(Self.loggedAsError(server, "XMinioStorageFull"), "\(server.log.suffix(2000))")
        #expect(try await Self.failures(server, "full") == 1)

        let head = try await ServeStuckDependencyTests.resume(location, photo, token: token, server: server)
        #expect(head.status == 200 && head.header("Upload-Offset") == String(photo.count), "\(head) \(server.log.suffix(3000))")
        #expect(try await bucket.objects.list(prefix: "profile_images/u1/") == [key])
    }
}
