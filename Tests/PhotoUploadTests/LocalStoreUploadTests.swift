import Foundation
import Testing
import TestSupport
@testable import PhotoUpload

/// The embedded destination: a folder, with the same semantics as a resumable upload server.
@Suite struct LocalStoreUploadTests {
    func events(of task: UploadTask) async -> [UploadEvent] {
        var all: [UploadEvent] = []
        for await event in task.events { all.append(event) }
        return all
    }

    @Test(arguments: [100_000, 1_000_000, 5_000_000])
    func uploadsAreByteIdenticalWithMonotoneProgress(size: Int) async throws {
        let root = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        let bytes = testBytes(size, seed: UInt64(size))
        let uploader = try Uploader(destination: root.appendingPathComponent("store").absoluteString)
        let task = await uploader.upload(.bytes(bytes), request: UploadRequest(key: "user_photos/u1/album/p1.jpg"))
        let all = await events(of: task)
        #expect(all.last == .finished(location: root.appendingPathComponent("store/user_photos/u1/album/p1.jpg").absoluteString))
        #expect(all.filter(\.isTerminal).count == 1)
        let stored = try [UInt8](Data(contentsOf: root.appendingPathComponent("store/user_photos/u1/album/p1.jpg")))
        #expect(stored == bytes)
        let progress = all.compactMap { if case .progress(let p) = $0 { p } else { nil } }
        #expect(progress.count >= 2, "even a 100 KB upload shows progress")
        #expect(zip(progress, progress.dropFirst()).allSatisfy { $0.acknowledged <= $1.acknowledged && $0.sent <= $1.sent })
        #expect(progress.allSatisfy { $0.acknowledged <= $0.sent && $0.sent <= Int64(size) })
        #expect(progress.last?.acknowledged == Int64(size))
        let leftovers = (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("store/.photoprep-uploads").path)) ?? []
        #expect(leftovers.isEmpty)
        let beside = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("store/user_photos/u1/album").path)
        #expect(beside == ["p1.jpg"], "no temporary file left beside it")
    }

    /// A folder that cannot be written in a way no retry mends (here a file where it should be) fails the upload
    /// at once, with the system's reason — straight to its key and as a partial upload alike — where a full
    /// disk would be tried again.
    @Test func aFolderThatCannotBeWrittenFailsAtOnce() async throws {
        let root = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        let file = root.appendingPathComponent("a-file")
        try Data("x".utf8).write(to: file)
        var configuration = UploadConfiguration()
        configuration.maxRetryDuration = .seconds(600)
        let uploader = try Uploader(destination: file.absoluteString, configuration: configuration)
        for size in [1000, 2_000_000] {
            let all = await events(of: await uploader.upload(.bytes(testBytes(size)), request: UploadRequest(key: "k.jpg")))
            #expect(!all.contains { if case .retrying = $0 { true } else { false } }, "\(size): \(all)")
            guard case .failed(let error) = all.last else { Issue.record("\(size): \(all)"); continue }
            #expect("\(error)".contains("Not a directory"), "\(error)")
        }
        #expect(try Data(contentsOf: file) == Data("x".utf8))
    }

    /// Smaller than a chunk: written straight to its key in one request (no partial upload, no record), with
    /// progress as it is written. Larger: a partial upload that takes the first chunk with its creation.
    @Test func anUploadWithinOneChunkGoesStraightToItsKey() async throws {
        let root = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        var configuration = UploadConfiguration()
        configuration.chunkSize = 1 << 20
        configuration.maxChunkSize = 1 << 20
        let uploader = try Uploader(destination: root.path, configuration: configuration)
        let small = testBytes(300_000, seed: 3)
        let task = await uploader.upload(.bytes(small), request: UploadRequest(key: "a/small.jpg"))
        let all = await events(of: task)
        #expect(all.last == .finished(location: root.appendingPathComponent("a/small.jpg").absoluteString))
        let sent = all.compactMap { if case .progress(let p) = $0 { p.sent } else { nil } }
        #expect(Set(sent).count >= 5, "64 KiB at a time: \(sent)")
        #expect(try [UInt8](Data(contentsOf: root.appendingPathComponent("a/small.jpg"))) == small)
        #expect(!FileManager.default.fileExists(atPath: root.appendingPathComponent(".photoprep-uploads").path), "no partial upload was made")

        let large = testBytes(2_500_000, seed: 4)
        #expect(await uploader.upload(.bytes(large), request: UploadRequest(key: "a/large.jpg")).result() == .finished(location: root.appendingPathComponent("a/large.jpg").absoluteString))
        #expect(try [UInt8](Data(contentsOf: root.appendingPathComponent("a/large.jpg"))) == large)
        #expect(try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(".photoprep-uploads").path).isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("a").path).sorted() == ["large.jpg", "small.jpg"])
    }

    @Test func cancelRemovesThePartialUpload() async throws {
        let root = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        var configuration = UploadConfiguration()
        configuration.chunkSize = 64 * 1024
        configuration.maxChunkSize = 64 * 1024
        configuration.maxBytesPerSecond = 4_000_000  // 3 MB take ~0.75 s: time to cancel half-way
        let uploader = try Uploader(destination: root.path, configuration: configuration, journal: UploadJournal(folder: root.appendingPathComponent("journal")))
        let task = await uploader.upload(.bytes(testBytes(3_000_000)), request: UploadRequest(key: "a/b.jpg"))
        var last: UploadEvent?
        for await event in task.events {
            if case .progress(let p) = event, p.acknowledged >= 1_000_000 { task.cancel() }
            last = event
        }
        #expect(last == .cancelled)
        #expect(!FileManager.default.fileExists(atPath: root.appendingPathComponent("a/b.jpg").path))
        let partials = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(".photoprep-uploads").path)
        #expect(partials.isEmpty)
        #expect(UploadJournal(folder: root.appendingPathComponent("journal")).entries().isEmpty)
    }

    @Test func pauseKeepsThePartialAndResumeFinishes() async throws {
        let root = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        var configuration = UploadConfiguration()
        configuration.chunkSize = 64 * 1024
        configuration.maxChunkSize = 64 * 1024
        configuration.maxBytesPerSecond = 4_000_000
        let journal = UploadJournal(folder: root.appendingPathComponent("journal"))
        let uploader = try Uploader(destination: root.path, configuration: configuration, journal: journal)
        let bytes = testBytes(2_000_000)
        let task = await uploader.upload(.bytes(bytes), request: UploadRequest(key: "p.jpg"))
        var pausedAt: Int64?
        for await event in task.events {
            switch event {
            case .progress(let p) where p.acknowledged >= 500_000 && pausedAt == nil:
                task.pause()
            case .progress(let p):
                // After the pause the upload goes on from where it stopped, never from the start.
                if let pausedAt { #expect(p.acknowledged >= pausedAt) }
            case .paused(let p):
                pausedAt = p.acknowledged
                let entry = try #require(journal.entries().first)
                #expect(entry.offset >= 500_000 && entry.offset < 2_000_000)
                // The partial upload is kept while paused, holding at least what was acknowledged.
                let part = root.appendingPathComponent(".photoprep-uploads/\(entry.location).part").path
                let size = try #require(try FileManager.default.attributesOfItem(atPath: part)[.size] as? Int)
                #expect(Int64(size) >= entry.offset)
                task.resume()
            default:
                break
            }
        }
        #expect(pausedAt != nil)
        #expect(await task.result() == .finished(location: root.appendingPathComponent("p.jpg").absoluteString))
        #expect(try [UInt8](Data(contentsOf: root.appendingPathComponent("p.jpg"))) == bytes)
        #expect(journal.entries().isEmpty)
    }

    @Test func keysCannotEscapeTheFolder() async throws {
        let root = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        let uploader = try Uploader(destination: root.appendingPathComponent("store").path)
        for key in ["../escape.jpg", "/etc/passwd", "a//b.jpg", "a/./b.jpg", ""] {
            let result = await uploader.upload(.bytes([1, 2, 3]), request: UploadRequest(key: key)).result()
            guard case .failed(let error) = result else { Issue.record("\(key) was accepted"); continue }
            #expect(error.kind == .rejected)
        }
        #expect(!FileManager.default.fileExists(atPath: root.appendingPathComponent("escape.jpg").path))
    }

    @Test func unreadableSourceFailsClearly() async throws {
        let uploader = try Uploader(destination: FileManager.default.temporaryDirectory.path)
        let result = await uploader.upload(.file("/nonexistent/photo.jpg"), request: UploadRequest(key: "x.jpg")).result()
        guard case .failed(let error) = result else { Issue.record("expected a failure"); return }
        #expect(error.kind == .io)
        #expect(error.message.contains("/nonexistent/photo.jpg"))
    }

    @Test func manyUploadsWithABoundOnConcurrency() async throws {
        let root = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        let uploader = try Uploader(destination: root.path)
        let items = (0..<6).map { i in (UploadSource.bytes(testBytes(50_000 + i, seed: UInt64(i))), UploadRequest(key: "album/\(i).jpg")) }
        let results = await uploader.uploadAll(items, maxConcurrent: 2)
        #expect(results.count == 6)
        for (i, result) in results.enumerated() {
            #expect(result == .finished(location: root.appendingPathComponent("album/\(i).jpg").absoluteString))
            #expect(try [UInt8](Data(contentsOf: root.appendingPathComponent("album/\(i).jpg"))) == testBytes(50_000 + i, seed: UInt64(i)))
        }
    }
}
