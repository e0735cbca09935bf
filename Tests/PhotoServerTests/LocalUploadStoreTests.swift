import Foundation
import NIOCore
import NIOPosix
import PhotoFiles
@testable import PhotoServer
import PhotoServices
import Testing
import TestSupport

/// The uploads in the data folder: a record and a data file each, as a restarted server finds them.
@Suite struct LocalUploadStoreTests {
    /// A finishing bound far longer than any test: on a loaded machine the work below may take longer than the
    /// server's 30 s, and would rightly be cancelled (the bound is tested through the built server).
    static let unbounded = FinishDeadline(bound: .seconds(600))

    static func upload(length: Int64) -> TusUpload {
        TusUpload(
            id: TusUpload.newID(), owner: "u1", ownerName: "Ana", path: .userPhoto(userId: "u1", album: "trip", file: "a.jpg"), length: length, metadata: [:],
            createdAt: Date(), expiresAt: Date() + 3600, state: .receiving)
    }

    /// Runs `body` with a data folder and an io pool of its own, both gone afterwards.
    static func withStoreFolder(_ body: (URL, NIOThreadPool) async throws -> Void) async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let io = NIOThreadPool(numberOfThreads: 1)
        io.start()
        do { try await body(folder, io) } catch {
            try await io.shutdownGracefully()
            throw error
        }
        try await io.shutdownGracefully()
    }

    /// A store on `folder` with `upload` created in it.
    static func store(creating upload: TusUpload, in folder: URL, io: NIOThreadPool) async throws -> LocalUploadStore {
        let store = try LocalUploadStore(folder: folder, io: io)
        try await store.create(upload)
        return store
    }

    static func write(_ bytes: [UInt8], to store: LocalUploadStore, _ id: String, at offset: Int64) async throws {
        let appender = try await store.appender(id, at: offset, wholeRequest: false)
        try await appender.write(ByteBuffer(bytes: bytes))
        try await appender.sync()
    }

    /// An upload's record keeps its path as the storage key (as records written before paths were kept parsed), and
    /// reads it back parsed; a record whose key names no path is refused as corrupt, not taken in somewhere else.
    @Test func aRecordKeepsItsPathAsItsKey() throws {
        let upload = Self.upload(length: 1000)
        let json = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(upload)) as? [String: Any])
        #expect(json["key"] as? String == "user_photos/u1/trip/a.jpg" && json["path"] == nil, "\(json)")
        #expect(try JSONDecoder().decode(TusUpload.self, from: JSONEncoder().encode(upload)) == upload)
        var forged = json
        forged["key"] = "user_photos/u1/../u2/a.jpg"
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(TusUpload.self, from: JSONSerialization.data(withJSONObject: forged)) }
    }

    /// A finished upload keeps its record, marked stored with the photo's URL, and loses its bytes; a server started
    /// on the folder afterwards reads it so.
    @Test func aFinishedUploadIsRecordedAsStoredWithoutItsBytes() async throws {
        try await Self.withStoreFolder { folder, io in
            let bytes = testBytes(1000)
            let upload = Self.upload(length: 1000)
            let store = try await Self.store(creating: upload, in: folder, io: io)
            try await Self.write(bytes, to: store, upload.id, at: 0)
            let handed = await store.finishing(upload, within: Self.unbounded) { file in
                FileManager.default.contents(atPath: file) == Data(bytes) ? .success("file:///stored/a.jpg") : .failure(.init(kind: .unprocessable, description: "not the bytes sent"))
            }
            guard case .success("file:///stored/a.jpg") = handed else { Issue.record("\(String(describing: handed))"); return }
            #expect(!FileManager.default.fileExists(atPath: store.dataPath(upload.id)))
            let reread = try #require(try await LocalUploadStore(folder: folder, io: io).upload(upload.id))
            #expect(reread.state == .stored)
            let left = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            #expect(left == ["\(upload.id).info"], "\(left)")
        }
    }

    /// The case a power cut may leave after finishing (the record's rewrite is not flushed, the data's removal may
    /// reach the disk): the old record without its data. The offset is 0 and the bytes can be sent again.
    @Test func aRecordWhoseDataIsGoneTakesTheBytesAgainFromZero() async throws {
        try await Self.withStoreFolder { folder, io in
            let upload = Self.upload(length: 600)
            try await LocalUploadStore(folder: folder, io: io).create(upload)
            try await Self.write(testBytes(300), to: try LocalUploadStore(folder: folder, io: io), upload.id, at: 0)
            try FileManager.default.removeItem(atPath: folder.appendingPathComponent("\(upload.id).bin").path)

            let store = try LocalUploadStore(folder: folder, io: io)
            #expect(try await store.upload(upload.id)?.state == .receiving)
            #expect(try await store.offset(upload.id) == 0)
            let bytes = testBytes(600, seed: 3)
            try await Self.write(bytes, to: store, upload.id, at: 0)
            #expect(try await store.offset(upload.id) == 600)
            #expect(FileManager.default.contents(atPath: store.dataPath(upload.id)) == Data(bytes))
            // Past offset 0 a missing data file is an error, not a file begun in the middle.
            try FileManager.default.removeItem(atPath: store.dataPath(upload.id))
            await #expect(throws: UploadStoreFailure.self) { try await store.appender(upload.id, at: 300, wholeRequest: false) }
        }
    }

    /// A body's buffers are gathered and written a batch at a time, never more than a batch held; nothing counts
    /// before `sync`, which writes the rest and flushes it.
    @Test func bodiesAreWrittenABatchAtATimeAndCountOnlyOnceSynced() async throws {
        try await Self.withStoreFolder { folder, io in
            let upload = Self.upload(length: 400_000)
            let store = try await Self.store(creating: upload, in: folder, io: io)
            let bytes = testBytes(400_000, seed: 5)
            let appender = try await store.appender(upload.id, at: 0, wholeRequest: false)
            for piece in stride(from: 0, to: bytes.count, by: 10_000) { try await appender.write(ByteBuffer(bytes: bytes[piece..<piece + 10_000])) }
            let written = try #require(FileIdentity(path: store.dataPath(upload.id))?.size)
            #expect(written >= Int64(FileAppender.batch) && written <= 400_000 - 10_000 && bytes.count - Int(written) <= FileAppender.batch, "\(written)")
            #expect(try await store.offset(upload.id) == 0)
            try await appender.sync()
            #expect(try await store.offset(upload.id) == 400_000)
            #expect(FileManager.default.contents(atPath: store.dataPath(upload.id)) == Data(bytes))
        }
    }

    /// The request that completes an upload writes its bytes out for the photo to be made from them, without making
    /// them count: while its appender is in use the offset stays where the last flush left it.
    @Test func bytesWrittenOutForFinishingAreReadableButNotAcknowledged() async throws {
        try await Self.withStoreFolder { folder, io in
            let upload = Self.upload(length: 1500)
            let store = try await Self.store(creating: upload, in: folder, io: io)
            let bytes = testBytes(1500, seed: 6)
            try await Self.write(Array(bytes[..<1000]), to: store, upload.id, at: 0)
            let appender = try await store.appender(upload.id, at: 1000, wholeRequest: false)
            try await appender.write(ByteBuffer(bytes: bytes[1000...]))
            try await appender.writeOut()
            #expect(FileManager.default.contents(atPath: store.dataPath(upload.id)) == Data(bytes))
            #expect(try await store.offset(upload.id) == 1000)
            appender.end()
            #expect(try await store.offset(upload.id) == 1500)  // the request done: what the file holds (after a crash, what survived)
        }
    }

    /// A created upload's record and folder entries are flushed with its first acknowledged bytes, not on creation
    /// (bytes only written out, as for the request that completes an upload, flush nothing); a record that cannot be
    /// flushed keeps the bytes from counting.
    @Test func theRecordIsFlushedWithTheFirstAcknowledgedBytes() async throws {
        try await Self.withStoreFolder { folder, io in
            let upload = Self.upload(length: 3000)
            let store = try await Self.store(creating: upload, in: folder, io: io)
            #expect(store.recordIsUnflushed(upload.id))
            #expect(try await LocalUploadStore(folder: folder, io: io).upload(upload.id)?.length == 3000)  // in the folder all the same
            let bytes = testBytes(3000, seed: 7)
            let first = try await store.appender(upload.id, at: 0, wholeRequest: false)
            try await first.write(ByteBuffer(bytes: bytes[..<1000]))
            try await first.writeOut()
            #expect(store.recordIsUnflushed(upload.id))
            try await first.sync()
            #expect(!store.recordIsUnflushed(upload.id))
            #expect(try await store.offset(upload.id) == 1000)
            try await Self.write(Array(bytes[1000..<2000]), to: store, upload.id, at: 1000)
            #expect(!store.recordIsUnflushed(upload.id))
            #expect(try await store.offset(upload.id) == 2000)

            // A record gone from the folder cannot be flushed: the bytes are written but not acknowledged.
            let lost = Self.upload(length: 1000)
            try await store.create(lost)
            try FileManager.default.removeItem(atPath: folder.appendingPathComponent("\(lost.id).info").path)
            let appender = try await store.appender(lost.id, at: 0, wholeRequest: false)
            try await appender.write(ByteBuffer(bytes: bytes[..<1000]))
            await #expect(throws: UploadStoreFailure.self) { try await appender.sync() }
            #expect(try await store.offset(lost.id) == 0)
            #expect(store.recordIsUnflushed(lost.id))
            try await store.delete(lost.id)
            #expect(!store.recordIsUnflushed(lost.id))
        }
    }

    /// The stored record is written over the old one in place; one shorter than the old is padded with spaces and
    /// reads back the same.
    @Test func aStoredRecordShorterThanTheOldOneReadsBackTheSame() async throws {
        try await Self.withStoreFolder { folder, io in
            var upload = Self.upload(length: 10)
            upload.metadata["filename"] = String(repeating: "long name ", count: 50)
            let store = try await Self.store(creating: upload, in: folder, io: io)
            try await Self.write(testBytes(10), to: store, upload.id, at: 0)
            let info = folder.appendingPathComponent("\(upload.id).info").path
            let before = try #require(FileIdentity(path: info))
            var shorter = upload
            shorter.metadata = [:]
            guard case .success = await store.finishing(shorter, within: Self.unbounded, { _ in .success("file:///stored/b.jpg") }) else { Issue.record("not stored"); return }
            let after = try #require(FileIdentity(path: info))
            #expect(after.size == before.size && after.inode == before.inode)
            let reread = try #require(try await LocalUploadStore(folder: folder, io: io).upload(upload.id))
            #expect(reread.state == .stored && reread.metadata.isEmpty)
        }
    }
}
