import Foundation
import PhotoUpload
import Testing
import TestSupport

/// The uploader speaking the IETF resumable-upload draft (as Apple's URLSession does) to an independent
/// implementation: swift-nio-extras' `NIOResumableUpload` handler, in `ResumableUploadTestServer`.
@Suite struct ResumableDraftTests {
    /// `ResumableUploadTestServer` (built with the tests) on a folder of its own.
    final class DraftServer: @unchecked Sendable {
        let folder: URL
        let server: ServerProcess

        /// `publicPort`: where clients reach it (a proxy in front of it), for the upload URLs it hands out.
        init(publicPort: Int? = nil) throws {
            folder = try temporaryFolder()
            let port = ServerProcess.freePort()
            let executable = photoprepBinary.deletingLastPathComponent().appendingPathComponent("ResumableUploadTestServer").path
            server = try ServerProcess(port: port, executable: executable, arguments: [String(port), folder.path] + (publicPort.map { [String($0)] } ?? []))
        }

        /// The upload at `path` once complete (the server names it only then).
        func stored(_ path: String) -> [UInt8]? {
            FileManager.default.contents(atPath: folder.appendingPathComponent(path).path).map { [UInt8]($0) }
        }

        deinit {
            server.stop()
            try? FileManager.default.removeItem(at: folder)
        }
    }

    static func upload(
        _ bytes: [UInt8], key: String, to endpoint: String, httpProtocol: HTTPUploadProtocol, chunk: Int = 64 * 1024
    ) async throws -> [UploadEvent] {
        var configuration = UploadConfiguration()
        configuration.chunkSize = chunk
        configuration.maxChunkSize = chunk
        configuration.initialBackoff = .milliseconds(50)
        configuration.httpProtocol = httpProtocol
        let uploader = try Uploader(destination: endpoint, configuration: configuration, journal: UploadJournal(folder: try temporaryFolder()))
        let task = await uploader.upload(.bytes(bytes), request: UploadRequest(key: key))
        var events: [UploadEvent] = []
        for await event in task.events { events.append(event) }
        return events
    }

    /// A chunk cut off half-way (the server got the request's head and half its body, then the
    /// connection closed): the client asks the server's offset and sends from there, each byte beyond
    /// it once — on interop versions 3 and 6.
    @Test(arguments: [3, 6]) func anUploadCutHalfWayIsResumedFromTheServersOffset(version: Int) async throws {
        let proxyPort = ServerProcess.freePort()
        let nio = try DraftServer(publicPort: proxyPort)
        let proxy = try FaultProxy(upstream: nio.server.port, faults: ["--cut", "1"], port: proxyPort)
        let photo = [UInt8](try Data(contentsOf: projectFolder.appendingPathComponent("TestImages/photos/storm-1920x1280.jpg")))
        let events = try await Self.upload(
            photo, key: "v\(version)/storm.jpg", to: "http://127.0.0.1:\(proxy.server.port)/up/", httpProtocol: .ietfDraft(interopVersion: version))
        guard case .finished(let location) = events.last else { Issue.record("not finished: \(events)"); return }
        #expect(location.contains("/resumable_upload/"))
        #expect(events.contains { if case .retrying = $0 { true } else { false } })
        #expect(nio.stored("up/v\(version)/storm.jpg") == photo)

        let log = proxy.dataLog
        let cut = try #require(log.first)
        #expect(cut.offset == 0 && cut.length == 64 * 1024 && cut.status == 0)
        // Resumed exactly where the server stood (the half it kept), then every byte once, in order.
        let resumed = Array(log.dropFirst())
        #expect(resumed.first?.offset == 32 * 1024, "\(log)")
        var expected = 32 * 1024
        for request in resumed {
            #expect(request.offset == expected && (200..<300).contains(request.status), "\(log)")
            expected += request.length
        }
        #expect(expected == photo.count)
    }

    /// Without being told, the uploader asks (`OPTIONS`) and speaks the draft to a server that answers
    /// as one; to a tus server it still speaks tus.
    @Test func theProtocolIsTheOneTheServerAdvertises() async throws {
        let nio = try DraftServer()
        let bytes = testBytes(200_000)
        let events = try await Self.upload(bytes, key: "auto/a.bin", to: "http://127.0.0.1:\(nio.server.port)/up/", httpProtocol: .automatic)
        guard case .finished(let location) = events.last else { Issue.record("not finished: \(events)"); return }
        #expect(location.contains("/resumable_upload/"))
        #expect(nio.stored("up/auto/a.bin") == bytes)

        let tus = try TusServer()
        let viaTus = try await Self.upload(bytes, key: "auto/b.bin", to: tus.endpoint, httpProtocol: .automatic)
        guard case .finished(let tusLocation) = viaTus.last else { Issue.record("not finished: \(viaTus)"); return }
        #expect(tusLocation.hasPrefix(tus.endpoint))
        #expect(try await download(tusLocation) == bytes)
    }

    /// `photoprep upload --protocol draft-3`, killed half-way, run again: it resumes from the journal
    /// where the server stands (interop version 3: `Upload-Incomplete`), the file arrives whole.
    @Test func aKilledUploadCommandResumesFromItsJournal() async throws {
        let proxyPort = ServerProcess.freePort()
        let nio = try DraftServer(publicPort: proxyPort)
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // The proxy holds the upload once the server has 1 MB (so the test finds it half-way, however busy
        // the machine); it is stopped with the client, the request it held never reaching the server.
        let release = folder.appendingPathComponent("never")
        var proxy: FaultProxy? = try FaultProxy(
            upstream: nio.server.port, faults: ["--pause-after-bytes", "1000000", "--resume-file", release.path], port: proxyPort)
        let bytes = testBytes(3_000_000, seed: 33)
        let file = folder.appendingPathComponent("photo.jpg")
        try Data(bytes).write(to: file)
        let state = folder.appendingPathComponent("state")
        let chunk = 64 * 1024
        let arguments = [
            "upload", file.path, "--to", "http://127.0.0.1:\(proxyPort)/up/", "--protocol", "draft-3", "--state", state.path,
            "--chunk-size", String(chunk), "--json",
        ]
        let first = try BackgroundCommand(arguments)
        let journal = UploadJournal(folder: state)
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, (journal.entries().first?.offset ?? 0) < 1_000_000 { try await Task.sleep(for: .milliseconds(10)) }
        first.crash()
        let killedAt = try #require(journal.entries().first?.offset)
        #expect(killedAt >= 1_000_000 && killedAt < bytes.count, "killed half-way")
        let held = try #require(proxy?.dataBytes)
        proxy = nil

        let again = try FaultProxy(upstream: nio.server.port, faults: [], port: proxyPort)
        let second = try await photoprep(arguments)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(nio.stored("up/photo.jpg") == bytes)
        // The second run started where the server stood, and sent each remaining byte once.
        #expect(again.dataLog.first?.offset == held, "\(again.dataLog)")
        #expect(held + again.dataBytes == bytes.count)
        #expect(journal.entries().isEmpty)
    }

    /// Paused after the first acknowledged chunk and resumed: it goes on from there and completes.
    @Test func aPausedUploadResumes() async throws {
        let nio = try DraftServer()
        var configuration = UploadConfiguration()
        configuration.chunkSize = 32 * 1024
        configuration.maxChunkSize = 32 * 1024
        configuration.httpProtocol = .ietfDraft(interopVersion: 6)
        let uploader = try Uploader(destination: "http://127.0.0.1:\(nio.server.port)/up/", configuration: configuration)
        let bytes = testBytes(400_000, seed: 5)
        let task = await uploader.upload(.bytes(bytes), request: UploadRequest(key: "paused.bin"))
        var events: [UploadEvent] = []
        var pauseAsked = false
        var pausedAt: Int64?
        for await event in task.events {
            events.append(event)
            switch event {
            case .progress(let progress) where progress.acknowledged > 0 && !pauseAsked:
                pauseAsked = true
                task.pause()
            case .progress(let progress):
                // Resumed where the server's offset was, not uploaded again from the start.
                if let pausedAt { #expect(progress.acknowledged >= pausedAt) }
            case .paused(let progress):
                pausedAt = progress.acknowledged
                task.resume()  // once it says it is paused (a resume asked earlier would come before the pause)
            default:
                break
            }
        }
        #expect(events.contains { if case .paused = $0 { true } else { false } }, "\(events)")
        guard case .finished = events.last else { Issue.record("not finished: \(events)"); return }
        #expect(nio.stored("up/paused.bin") == bytes)
    }

    /// Cancelling a draft upload deletes it on the server (`DELETE`); the file never appears.
    @Test func cancellingDeletesTheUploadOnTheServer() async throws {
        let proxyPort = ServerProcess.freePort()
        let nio = try DraftServer(publicPort: proxyPort)
        let proxy = try FaultProxy(upstream: nio.server.port, faults: ["--delay-data", "0.05"], port: proxyPort)
        var configuration = UploadConfiguration()
        configuration.chunkSize = 32 * 1024
        configuration.maxChunkSize = 32 * 1024
        configuration.httpProtocol = .ietfDraft(interopVersion: 6)
        let uploader = try Uploader(destination: "http://127.0.0.1:\(proxyPort)/up/", configuration: configuration)
        let task = await uploader.upload(.bytes(testBytes(600_000)), request: UploadRequest(key: "gone.bin"))
        var events: [UploadEvent] = []
        for await event in task.events {
            events.append(event)
            if case .progress(let progress) = event, progress.acknowledged > 0 { task.cancel() }
        }
        #expect(events.last == .cancelled, "\(events)")
        #expect(proxy.requests["DELETE"] == 1, "\(proxy.requests)")
        #expect(nio.stored("up/gone.bin") == nil)
    }
}
