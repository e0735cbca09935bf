import Foundation
import Testing
import TestSupport
@testable import PhotoUpload

/// Against a real tus server (`resumable-upload` from PyPI) on 127.0.0.1, checking the server's state.
@Suite(.serialized) struct TusUploadTests {
    /// Fixed chunks of `chunk` bytes (so that tests can stop an upload half-way), or with `growing`
    /// the default: chunks from `chunk` sized to the measured rate.
    func configuration(chunk: Int = 256 * 1024, growing: Bool = false, retry: Duration = .seconds(30)) -> UploadConfiguration {
        var c = UploadConfiguration()
        c.chunkSize = chunk
        if !growing { c.maxChunkSize = chunk }
        c.maxRetryDuration = retry
        c.initialBackoff = .milliseconds(50)
        c.maxBackoff = .milliseconds(400)
        return c
    }

    func collect(_ task: UploadTask) async -> [UploadEvent] {
        var all: [UploadEvent] = []
        for await event in task.events { all.append(event) }
        return all
    }

    @Test(arguments: [100_000, 1_000_000, 5_000_000])
    func uploadsAreByteIdenticalOnTheServer(size: Int) async throws {
        let server = try TusServer()
        let bytes = testBytes(size, seed: UInt64(size) + 7)
        let uploader = try Uploader(destination: server.endpoint, configuration: configuration(growing: true))
        let all = await collect(await uploader.upload(.bytes(bytes), request: UploadRequest(key: "group_photos/g1/photo.jpg")))
        guard case .finished(let location) = all.last else { Issue.record("\(all.last.map(String.init(describing:)) ?? "no event")"); return }
        #expect(location.hasPrefix(server.endpoint))
        #expect(try await download(location) == bytes)
        let progress = all.compactMap { if case .progress(let p) = $0 { p } else { nil } }
        #expect(progress.count >= 2)
        #expect(zip(progress, progress.dropFirst()).allSatisfy { $0.acknowledged <= $1.acknowledged && $0.sent <= $1.sent })
        #expect(progress.last?.acknowledged == Int64(size) && progress.allSatisfy { $0.sent <= Int64(size) })
        #expect(all.filter(\.isTerminal).count == 1)
        // Where the upload is, said once, before any acknowledged byte.
        let started = all.indices.filter { if case .started = all[$0] { true } else { false } }
        #expect(started.count == 1 && all[started[0]] == .started(location: location))
        let firstAcknowledged = all.firstIndex { if case .progress(let p) = $0 { p.acknowledged > 0 } else { false } }
        #expect(started[0] < (firstAcknowledged ?? 0))
    }

    @Test func cancelHalfWayDeletesTheUploadOnTheServer() async throws {
        let server = try TusServer()
        let proxy = try FaultProxy(upstream: server.port, faults: ["--delay-data", "0.02"])
        let uploader = try Uploader(destination: proxy.endpoint, configuration: configuration(chunk: 64 * 1024))
        let task = await uploader.upload(.bytes(testBytes(3_000_000)), request: UploadRequest(key: "c.jpg"))
        var location: String?
        var last: UploadEvent?
        let journal = UploadJournal(folder: try temporaryFolder())
        _ = journal
        for await event in task.events {
            if case .progress(let p) = event, p.acknowledged >= 1_000_000, location == nil {
                location = "seen"
                task.cancel()
            }
            last = event
        }
        #expect(last == .cancelled)
        // The server holds no upload any more: its upload folder has no data file left.
        let files = try FileManager.default.contentsOfDirectory(atPath: server.folder.path).filter { !$0.hasPrefix("uploads.db") }
        #expect(files.isEmpty, "\(files)")
    }

    @Test func restartedServerIsResumedAfter() async throws {
        let server = try TusServer()
        let proxy = try FaultProxy(upstream: server.port, faults: ["--delay-data", "0.02"])
        let bytes = testBytes(2_000_000, seed: 3)
        let uploader = try Uploader(destination: proxy.endpoint, configuration: configuration(chunk: 64 * 1024))
        let task = await uploader.upload(.bytes(bytes), request: UploadRequest(key: "r.jpg"))
        var restarted = false
        var last: UploadEvent?
        for await event in task.events {
            if case .progress(let p) = event, p.acknowledged >= 600_000, !restarted {
                restarted = true
                try server.restart()
            }
            last = event
        }
        guard case .finished(let location) = last else { Issue.record("\(String(describing: last))"); return }
        #expect(restarted)
        #expect(try await download(location.replacingOccurrences(of: String(proxy.server.port), with: String(server.port))) == bytes)
        // Continued at the restarted server's offset, not started again.
        #expect(proxy.requests["POST"] == 1, "\(proxy.requests)")
        #expect(proxy.dataBytes <= bytes.count + 64 * 1024, "accepted \(proxy.dataBytes) for \(bytes.count)")
    }

    @Test func transient503sAndDroppedConnectionsAreRetried() async throws {
        let server = try TusServer()
        let proxy = try FaultProxy(upstream: server.port, faults: ["--fail-503", "3", "--drop", "5"])
        let bytes = testBytes(1_500_000, seed: 5)
        let uploader = try Uploader(destination: proxy.endpoint, configuration: configuration())
        let result = await uploader.upload(.bytes(bytes), request: UploadRequest(key: "t.jpg")).result()
        guard case .finished(let location) = result else { Issue.record("\(result)"); return }
        #expect(try await download(location.replacingOccurrences(of: String(proxy.server.port), with: String(server.port))) == bytes)
    }

    @Test func retryBudgetEndsInAClearError() async throws {
        let server = try TusServer()
        let proxy = try FaultProxy(upstream: server.port, faults: ["--fail-503", "1000"])
        // A 5 s budget, not the default 600 s. It also bounds each request, and with the whole suite running at
        // once on two cores the proxy's first answer has taken over 2 s: the error was then the timeout, not the 503s.
        let uploader = try Uploader(destination: proxy.endpoint, configuration: configuration(retry: .seconds(5)))
        let started = ContinuousClock.now
        let result = await uploader.upload(.bytes(testBytes(300_000)), request: UploadRequest(key: "b.jpg")).result()
        guard case .failed(let error) = result else { Issue.record("\(result)"); return }
        #expect(error.kind == .retriesExhausted)
        #expect(error.message.contains("503"), "\(error.message)")
        #expect(ContinuousClock.now - started < .seconds(30))
    }

    @Test func corruptedChunkIsResentAfterTheChecksumMismatch() async throws {
        let server = try TusServer()
        let proxy = try FaultProxy(upstream: server.port, faults: ["--corrupt-data", "2"])
        let bytes = testBytes(700_000, seed: 9)
        let uploader = try Uploader(destination: proxy.endpoint, configuration: configuration())
        let result = await uploader.upload(.bytes(bytes), request: UploadRequest(key: "k.jpg")).result()
        guard case .finished(let location) = result else { Issue.record("\(result)"); return }
        #expect(try await download(location.replacingOccurrences(of: String(proxy.server.port), with: String(server.port))) == bytes,
                "the corrupted chunks were refused (460) and sent again")
    }

    @Test func tooLargeAndUnauthorisedFailAtOnce() async throws {
        let server = try TusServer(maxSize: 1_000_000)
        let uploader = try Uploader(destination: server.endpoint, configuration: configuration())
        let large = await uploader.upload(.bytes(testBytes(1_500_000)), request: UploadRequest(key: "big.jpg")).result()
        guard case .failed(let error) = large else { Issue.record("\(large)"); return }
        #expect(error.kind == .tooLarge && error.status == 413)

        let proxy = try FaultProxy(upstream: server.port, faults: ["--require-token", "secret"])
        let guarded = try Uploader(destination: proxy.endpoint, configuration: configuration())
        let refused = await guarded.upload(.bytes(testBytes(1000)), request: UploadRequest(key: "x.jpg", authorization: "Bearer wrong")).result()
        guard case .failed(let denied) = refused else { Issue.record("\(refused)"); return }
        #expect(denied.kind == .notAuthorized && denied.status == 401)
        #expect(proxy.requests["POST"] == 1 && proxy.requests["PATCH"] == nil, "one creation, no retries on 401: \(proxy.requests)")
        let allowed = await guarded.upload(.bytes(testBytes(1000)), request: UploadRequest(key: "x.jpg", authorization: "Bearer secret")).result()
        guard case .finished = allowed else { Issue.record("\(allowed)"); return }
    }

    @Test func journalNeverResumesAgainstOtherContent() async throws {
        let server = try TusServer()
        let folder = try temporaryFolder()
        let journal = UploadJournal(folder: folder)
        var slow = configuration(chunk: 64 * 1024)
        slow.maxBytesPerSecond = 1_000_000
        let uploader = try Uploader(destination: server.endpoint, configuration: slow, journal: journal)
        let first = testBytes(500_000, seed: 11)
        let task = await uploader.upload(.bytes(first), request: UploadRequest(key: "same-key.jpg"))
        for await event in task.events {
            if case .progress(let p) = event, p.acknowledged >= 128 * 1024 { task.pause() }
            if case .paused = event { break }
        }
        #expect(journal.entries().count == 1)
        // Other content under the same key: a fresh upload, not a continuation of the first.
        let second = testBytes(500_000, seed: 12)
        let result = await uploader.upload(.bytes(second), request: UploadRequest(key: "same-key.jpg")).result()
        guard case .finished(let location) = result else { Issue.record("\(result)"); return }
        #expect(try await download(location) == second)
        #expect(journal.entries().isEmpty)
    }

    /// tuspyserver offers creation-with-upload and no checksums: a small photo goes with the POST.
    @Test func aSmallPhotoTakesOneRequestWithCreationWithUpload() async throws {
        let server = try TuspyServer()
        let proxy = try FaultProxy(upstream: server.server.port, faults: [])
        let bytes = testBytes(100_000, seed: 41)
        let uploader = try Uploader(destination: proxy.endpoint, configuration: configuration())
        let all = await collect(await uploader.upload(.bytes(bytes), request: UploadRequest(key: "small.jpg")))
        guard case .finished(let location) = all.last else { Issue.record("\(String(describing: all.last))"); return }
        #expect(server.stored(location) == bytes)
        // The proxy counts a request once it has relayed the answer: the client can have it first.
        try? await waitUntil(seconds: 5) { proxy.requests["POST"] != nil }
        #expect(proxy.requests == ["OPTIONS": 1, "POST": 1], "discovery, then the photo with the creation request")
        #expect(proxy.dataBytes == bytes.count)
        let sent = all.compactMap { if case .progress(let p) = $0 { p.sent } else { nil } }
        #expect(sent.count >= 4, "progress moves while the one request is sent: \(sent)")

        // A larger file: the first chunk with the POST, the rest by PATCH from the server's offset.
        let large = testBytes(1_000_000, seed: 42)
        let result = await uploader.upload(.bytes(large), request: UploadRequest(key: "large.jpg")).result()
        guard case .finished(let second) = result else { Issue.record("\(result)"); return }
        #expect(server.stored(second) == large)
        #expect(proxy.dataBytes == bytes.count + large.count, "nothing sent twice")
    }

    /// resumable-upload checks checksums on PATCH only, so with checksums in use the data goes by PATCH.
    @Test func withChecksumsTheDataGoesByVerifiedPatch() async throws {
        let server = try TusServer()
        let proxy = try FaultProxy(upstream: server.port, faults: [])
        let bytes = testBytes(100_000, seed: 44)
        let uploader = try Uploader(destination: proxy.endpoint, configuration: configuration())
        let result = await uploader.upload(.bytes(bytes), request: UploadRequest(key: "v.jpg")).result()
        guard case .finished(let location) = result else { Issue.record("\(result)"); return }
        #expect(try await download(location.replacingOccurrences(of: String(proxy.server.port), with: String(server.port))) == bytes)
        #expect(proxy.requests == ["OPTIONS": 1, "POST": 1, "PATCH": 1])
    }

    @Test func theJournalKeepsTheServersExpiryAndDropsExpiredUploads() async throws {
        let server = try TusServer()
        let proxy = try FaultProxy(upstream: server.port, faults: [])
        let journal = UploadJournal(folder: try temporaryFolder())
        var slow = configuration(chunk: 64 * 1024)
        slow.maxBytesPerSecond = 1_000_000
        let uploader = try Uploader(destination: proxy.endpoint, configuration: slow, journal: journal)
        let bytes = testBytes(600_000, seed: 43)
        let task = await uploader.upload(.bytes(bytes), request: UploadRequest(key: "e.jpg"))
        for await event in task.events {
            if case .progress(let p) = event, p.acknowledged >= 128 * 1024 { task.pause() }
            if case .paused = event { break }
        }
        var entry = try #require(journal.entries().first)
        let expires = try #require(entry.expires, "the server announced Upload-Expires")
        #expect(abs(expires.timeIntervalSinceNow - 86_400) < 120, "the server keeps uploads for a day: \(expires)")

        // Pretend a day went by: the journalled upload must not be resumed, but uploaded afresh.
        entry.expires = Date(timeIntervalSinceNow: -1)
        try journal.save(entry)
        let posts = proxy.requests["POST"] ?? 0
        let deletes = proxy.requests["DELETE"] ?? 0
        let result = await uploader.upload(.bytes(bytes), request: UploadRequest(key: "e.jpg")).result()
        guard case .finished(let location) = result else { Issue.record("\(result)"); return }
        #expect(location != entry.location)
        #expect(proxy.requests["POST"] == posts + 1, "created anew")
        #expect(proxy.requests["DELETE"] == deletes + 1, "the forgotten upload was deleted (awaited, not in a detached task)")
        #expect(try await download(location.replacingOccurrences(of: String(proxy.server.port), with: String(server.port))) == bytes)
        #expect(journal.entries().isEmpty)
    }

    /// Interoperability with a second implementation: tuspyserver (no checksum extension).
    @Test func uploadsAndCancelsOnTuspyserverToo() async throws {
        let server = try TuspyServer()
        let bytes = testBytes(1_200_000, seed: 31)
        let uploader = try Uploader(destination: server.endpoint, configuration: configuration(chunk: 128 * 1024))
        let result = await uploader.upload(.bytes(bytes), request: UploadRequest(key: "interop.jpg")).result()
        guard case .finished(let location) = result else { Issue.record("\(result)"); return }
        #expect(server.stored(location) == bytes)

        var slow = configuration(chunk: 64 * 1024)
        slow.maxBytesPerSecond = 2_000_000
        let cancelling = try Uploader(destination: server.endpoint, configuration: slow)
        let task = await cancelling.upload(.bytes(testBytes(2_000_000, seed: 32)), request: UploadRequest(key: "gone.jpg"))
        for await event in task.events {
            if case .progress(let p) = event, p.acknowledged >= 500_000 { task.cancel() }
        }
        #expect(await task.result() == .cancelled)
        // tuspyserver may still be ending the cancelled request (writing its info through a .tmp) as the DELETE arrives.
        let name = URL(string: location)!.lastPathComponent
        func left() throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: server.folder.path).filter { !$0.hasPrefix(".") && !$0.hasSuffix(".info") && $0 != name }
        }
        try? await waitUntil(seconds: 5) { try left().isEmpty }
        let remaining = try left()
        #expect(remaining.isEmpty, "\(remaining)")
    }
}
