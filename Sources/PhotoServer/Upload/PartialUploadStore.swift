import Foundation

/// Where the server keeps uploads in progress: their records, the bytes received so far, and who is
/// finishing one. `LocalUploadStore` keeps them in the data folder (one machine); `SharedUploadStore`
/// keeps records in the shared database and bytes in the bucket, so that an upload begun through one
/// instance continues through any other. One request at a time per upload is the caller's to ensure (`UploadLocks`).
protocol PartialUploadStore: Sendable {
    /// Records a new upload with no bytes yet.
    func create(_ upload: TusUpload) async throws(UploadStoreFailure)
    /// The upload's record, or nil when there is none (never created, deleted, or expired and swept).
    func upload(_ id: String) async throws(UploadStoreFailure) -> TusUpload?
    /// Bytes received and durable: what a client may be told the server holds.
    func offset(_ id: String) async throws(UploadStoreFailure) -> Int64
    /// Whether bytes the store acknowledged are no longer there (a piece gone from the bucket, a data file cut
    /// short or removed): the upload cannot be finished. Asked when a client asks the offset.
    func lostBytes(_ id: String) async throws(UploadStoreFailure) -> Bool
    /// The first `count` bytes received.
    func head(_ id: String, count: Int) async throws(UploadStoreFailure) -> [UInt8]
    /// Every upload (for the expiry sweep, quotas, and the API's "uploading" state).
    func all() async throws(UploadStoreFailure) -> [TusUpload]
    /// Removes the upload: record, bytes, everything — unless another instance is finishing it (false,
    /// nothing removed: its photo may be on its way to storage).
    @discardableResult func delete(_ id: String) async throws(UploadStoreFailure) -> Bool
    /// Takes bytes at `offset` (which must be what the store holds). `wholeRequest`: nothing may count
    /// before the request's end (its checksum covers all of it), so nothing is made durable before `sync`.
    func appender(_ id: String, at offset: Int64, wholeRequest: Bool) async throws(UploadStoreFailure) -> any UploadAppender
    /// Runs `store` on the complete bytes as a file, unless someone else is finishing this upload (nil) — the bytes
    /// gathered and `store` run within `deadline`. Its outcome is recorded: a URL marks the upload stored (its bytes
    /// freed, its record kept until it expires); a refusal that is final deletes it; `unavailable` keeps it for the
    /// next attempt.
    func finishing(
        _ upload: TusUpload, within deadline: FinishDeadline, _ store: @escaping @Sendable (_ file: String) async -> Result<String, FinishRefusal>
    ) async -> Result<String, FinishRefusal>?

    /// What the expiry sweep does besides deleting expired uploads (nothing, for some stores).
    func housekeeping(now: Date) async
}

extension PartialUploadStore {
    /// The uploads still receiving bytes and not expired.
    func unfinished(now: Date = Date()) async throws(UploadStoreFailure) -> [TusUpload] {
        try await all().filter { $0.state == .receiving && $0.expiresAt > now }
    }
}
