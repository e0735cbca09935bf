import Foundation
import Logging
import Synchronization
import Testing
import TestSupport
@testable import PhotoServer

/// Asking an upload's offset while something else finishes it (the sweeper, or another request): the answer is all
/// its bytes, never the size of the data file the finish has just deleted. Seen as `Upload-Offset: 0` for a stored
/// photo when the sweeper finished an upload between a HEAD's reading of its record and of its offset.
@Suite struct UploadOffsetRaceTests {
    /// A store that, the first time an offset is asked, lets `meanwhile` run first: the interleaving made certain.
    struct FinishedMeanwhile: PartialUploadStore {
        let inner: any PartialUploadStore
        let meanwhile: @Sendable () async -> Void
        let asked = Flag()

        final class Flag: Sendable {
            private let raised = Mutex(false)
            func raise() -> Bool { raised.withLock { was in defer { was = true }; return !was } }
        }

        func offset(_ id: String) async throws(UploadStoreFailure) -> Int64 {
            if asked.raise() { await meanwhile() }
            return try await inner.offset(id)
        }

        func create(_ upload: TusUpload) async throws(UploadStoreFailure) { try await inner.create(upload) }
        func upload(_ id: String) async throws(UploadStoreFailure) -> TusUpload? { try await inner.upload(id) }
        func lostBytes(_ id: String) async throws(UploadStoreFailure) -> Bool { try await inner.lostBytes(id) }
        func head(_ id: String, count: Int) async throws(UploadStoreFailure) -> [UInt8] { try await inner.head(id, count: count) }
        func all() async throws(UploadStoreFailure) -> [TusUpload] { try await inner.all() }
        func delete(_ id: String) async throws(UploadStoreFailure) -> Bool { try await inner.delete(id) }
        func appender(_ id: String, at offset: Int64, wholeRequest: Bool) async throws(UploadStoreFailure) -> any UploadAppender {
            try await inner.appender(id, at: offset, wholeRequest: wholeRequest)
        }
        func finishing(
            _ upload: TusUpload, within deadline: FinishDeadline, _ store: @escaping @Sendable (_ file: String) async -> Result<String, FinishRefusal>
        ) async -> Result<String, FinishRefusal>? {
            await inner.finishing(upload, within: deadline, store)
        }
        func housekeeping(now: Date) async { await inner.housekeeping(now: now) }
    }

    @Test func anOffsetAskedWhileTheSweeperFinishesTheUploadIsAllOfIt() async throws {
        try await SeededRouter.run { seeded in
            let core = seeded.server.uploads
            let caller = Caller(id: "u1", displayName: nil)
            let photo = try Fixture.bytes("photos/storm-1920x1280.jpg")
            // Every byte here but not stored, as after a server stopped between the last byte and the store.
            let upload = try await core.create(caller: caller, key: "profile_images/u1/me.jpg", length: Int64(photo.count))
            try Data(photo).write(to: seeded.data.appendingPathComponent("uploads/\(upload.id).bin"))
            // The sweeper's finish, as it runs it (under the upload's lock), between the record's reading and the offset's.
            let sweeper = UploadSweeper(uploads: core, interval: .seconds(3600), logger: .init(label: "test"))
            let racing = UploadHandler(
                store: FinishedMeanwhile(inner: core.store) { await sweeper.sweep() }, processor: core.processor, metrics: core.metrics,
                expiry: core.expiry, maxUnfinishedPerUser: core.maxUnfinishedPerUser, stopping: core.stopping)

            let (answered, offset) = try await racing.offset(of: upload.id, caller: caller)
            #expect(seeded.stored("profile_images/u1/me.jpg") != nil, "the sweeper stored it")
            #expect(offset == Int64(photo.count) && answered.state == .stored, "offset \(offset) of \(photo.count), \(answered.state)")
        }
    }
}
