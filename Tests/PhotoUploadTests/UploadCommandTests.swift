import Foundation
import Testing
import TestSupport
@testable import PhotoUpload

/// `photoprep upload`, run as a process, against a real tus server.
@Suite(.serialized) struct UploadCommandTests {
    func run(_ arguments: [String]) async throws -> CommandResult { try await photoprep(arguments) }

    @Test func killedUploadProcessResumesAndResendsAtMostAboutOneChunk() async throws {
        let server = try TusServer()
        let proxy = try FaultProxy(upstream: server.port, faults: ["--delay-data", "0.03"])
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bytes = testBytes(3_000_000, seed: 21)
        let file = folder.appendingPathComponent("photo.jpg")
        try Data(bytes).write(to: file)
        let state = folder.appendingPathComponent("state")
        let chunk = 64 * 1024
        let arguments = ["upload", file.path, "--to", proxy.endpoint, "--state", state.path, "--chunk-size", String(chunk), "--json"]

        let child = Process()
        child.executableURL = photoprepBinary
        child.arguments = arguments
        child.standardOutput = FileHandle.nullDevice
        try launch(child)
        let journal = UploadJournal(folder: state)
        // Watched from a thread of its own: a kill late behind the other tests' work would find the upload done.
        try await onThread {
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline, (journal.entries().first?.offset ?? 0) < 1_000_000 { usleep(10_000) }
            kill(child.processIdentifier, SIGKILL)
            child.waitUntilExit()
        }
        let killedAt = try #require(journal.entries().first?.offset)
        #expect(killedAt >= 1_000_000 && killedAt < 3_000_000, "killed half-way")

        let again = try await run(arguments)
        #expect(again.status == 0, "\(again.stderr)")
        let finished = again.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }.first { $0["event"] as? String == "finished" }
        let location = try #require(finished?["location"] as? String)
        #expect(try await download(location.replacingOccurrences(of: String(proxy.server.port), with: String(server.port))) == bytes)
        // Everything the server accepted over both runs: the file once, plus at most about one chunk again.
        #expect(proxy.dataBytes <= bytes.count + chunk, "re-sent \(proxy.dataBytes - bytes.count) bytes")
        #expect(journal.entries().isEmpty)
    }

    @Test func ctrlCPausesTheUploadAndTheNextRunResumesIt() async throws {
        let server = try TusServer()
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let chunk = 64 * 1024
        // The proxy holds every chunk after the eighth until `resume` exists: Ctrl-C lands while a request is in
        // flight, whatever the machine's load, and the pause cannot wait for its answer.
        let resume = folder.appendingPathComponent("resume")
        let proxy = try FaultProxy(upstream: server.port, faults: ["--pause-after-bytes", String(8 * chunk), "--resume-file", resume.path])
        let bytes = testBytes(2_000_000, seed: 23)
        let file = folder.appendingPathComponent("photo.jpg")
        try Data(bytes).write(to: file)
        let state = folder.appendingPathComponent("state")
        let arguments = ["upload", file.path, "--to", proxy.endpoint, "--state", state.path, "--chunk-size", String(chunk)]

        let child = Process()
        child.executableURL = photoprepBinary
        child.arguments = arguments
        let err = Pipe()
        child.standardOutput = FileHandle.nullDevice
        child.standardError = err
        try launch(child)
        let journal = UploadJournal(folder: state)
        let (interrupted, stderr) = try await onThread {
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline, (journal.entries().first?.offset ?? 0) < 8 * chunk { usleep(10_000) }
            let interrupted = Date()
            kill(child.processIdentifier, SIGINT)
            let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            child.waitUntilExit()
            return (interrupted, stderr)
        }
        #expect(child.terminationStatus == 130, "\(stderr)")
        // The held request would never end: the upload stopped without it (the request timeout is minutes).
        #expect(Date().timeIntervalSince(interrupted) < 20, "paused without waiting for the request in flight")
        #expect(stderr.contains("paused: \(file.path)"), "\(stderr)")
        let entry = try #require(journal.entries().first, "the journal keeps the paused upload")
        #expect(entry.offset == 8 * chunk, "what the server acknowledged")
        FileManager.default.createFile(atPath: resume.path, contents: nil)

        let again = try await run(arguments)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.contains("1 uploaded, 0 failed"), "\(again.stdout)")
        #expect(proxy.requests["POST"] == 1, "resumed, not created again")
        #expect(proxy.dataBytes <= bytes.count + chunk, "re-sent \(proxy.dataBytes - bytes.count) bytes")
        #expect(journal.entries().isEmpty)
    }

    /// `--key` names the one file's object whatever the file is called; a folder, a missing file and `--key` with
    /// two files are usage errors that say so; the summary counts the bytes uploaded, not those that failed.
    @Test func keysFoldersAndTheSummary() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let photo = folder.appendingPathComponent("My photo é.jpg")
        try FileManager.default.copyItem(atPath: Fixture.path("photos/storm-1920x1280.jpg"), toPath: photo.path)
        let store = folder.appendingPathComponent("store")
        let named = try await run(["upload", photo.path, "--to", store.absoluteString, "--key", "profile_images/u1/me.jpg", "--state", folder.appendingPathComponent("s").path])
        #expect(named.status == 0, "\(named.stderr)")
        #expect(try Data(contentsOf: store.appendingPathComponent("profile_images/u1/me.jpg")) == Data(contentsOf: photo))
        #expect(named.stdout.contains("1 uploaded, 0 failed — 0.7 MB uploaded"), "\(named.stdout)")
        for (arguments, reason) in [
            ([photo.path, photo.path, "--key", "x.jpg"], "--key names one file's object; got 2 files"),
            ([folder.path], "a folder; upload takes files"),
            ([folder.appendingPathComponent("gone.jpg").path], "gone.jpg: no such file"),
        ] {
            let refused = try await run(["upload"] + arguments + ["--to", store.absoluteString, "--state", folder.appendingPathComponent("s").path])
            #expect(refused.status == 2 && refused.stderr.contains(reason), "\(refused.stderr)")
        }
        // Refused by the destination (a file where its folder should be): nothing counted as uploaded.
        let blocked = folder.appendingPathComponent("blocked")
        try Data("x".utf8).write(to: blocked)
        let failed = try await run(["upload", photo.path, "--to", blocked.absoluteString, "--state", folder.appendingPathComponent("s").path])
        #expect(failed.status == 1 && failed.stdout.contains("0 uploaded, 1 failed — 0.0 MB uploaded"), "\(failed.stdout)\(failed.stderr)")
    }

    @Test func unauthorisedUploadFailsWithExitStatus1() async throws {
        let server = try TusServer()
        let proxy = try FaultProxy(upstream: server.port, faults: ["--require-token", "s3cret"])
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("a.jpg")
        try Data(testBytes(10_000)).write(to: file)
        let denied = try await run(["upload", file.path, "--to", proxy.endpoint, "--token", "wrong", "--state", folder.appendingPathComponent("s").path])
        #expect(denied.status == 1)
        #expect(denied.stderr.contains("not authorised"))
        let allowed = try await run(["upload", file.path, "--to", proxy.endpoint, "--token", "s3cret", "--state", folder.appendingPathComponent("s").path])
        #expect(allowed.status == 0, "\(allowed.stderr)")
    }

    @Test func prepareUploadsEveryOutputUnderItsRelativePath() async throws {
        let server = try TusServer()
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let photos = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("TestImages/photos")
        let out = folder.appendingPathComponent("out")
        let result = try await run(["prepare", photos.path, "--out", out.path, "--upload", server.endpoint,
                              "--state", folder.appendingPathComponent("state").path, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let events = result.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }.filter { $0["event"] as? String == "prepared" }
        #expect(events.count == 2)
        for event in events {
            let location = try #require(event["uploadedTo"] as? String)
            let output = try #require(event["output"] as? String)
            #expect(try await download(location) == [UInt8](Data(contentsOf: URL(fileURLWithPath: output))))
        }
    }
}
