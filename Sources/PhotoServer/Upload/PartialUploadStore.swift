import Foundation
import PhotoFiles
import NIOCore
import Synchronization

/// One tus upload the server holds.
struct TusUpload: Codable, Sendable, Equatable {
    enum State: String, Codable, Sendable {
        /// Bytes are arriving (or all arrived and the photo is not stored yet).
        case receiving
        /// All bytes arrived, the photo was normalised and stored at `url`.
        case stored
    }

    var id: String
    /// The `sub` of the token that created it: the only caller who may see or change it.
    var owner: String
    var ownerName: String?
    var key: String
    var length: Int64
    var metadata: [String: String]
    var createdAt: Date
    var expiresAt: Date
    var state: State
    var url: String?

    /// Upload ids are 32 lower-case hex digits; anything else names no upload (and no file or object).
    static func isValidID(_ id: String) -> Bool {
        id.utf8.count == 32 && id.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    static func newID() -> String {
        randomHex(byteCount: 16)
    }
}

/// Where the server keeps uploads in progress: their records, the bytes received so far, and who is
/// finishing one. `LocalUploadStore` keeps them in the data folder (one machine); `SharedUploadStore`
/// keeps records in the shared database and bytes in the bucket, so that an upload begun through one
/// instance continues through any other.
protocol PartialUploadStore: Sendable {
    /// Records a new upload with no bytes yet.
    func create(_ upload: TusUpload) async throws(UploadStoreFailure)
    /// The upload's record, or nil when there is none (never created, deleted, or expired and swept).
    func upload(_ id: String) async throws(UploadStoreFailure) -> TusUpload?
    /// Bytes received and durable: what a client may be told the server holds.
    func offset(_ id: String) async throws(UploadStoreFailure) -> Int64
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
    /// Runs `store` on the complete bytes as a file, unless someone else is finishing this upload (nil).
    /// Its outcome is recorded: a URL marks the upload stored (its bytes freed, its record kept until it
    /// expires); a refusal that is final deletes it; `unavailable` keeps it for the next attempt.
    func finishing(
        _ upload: TusUpload, _ store: @Sendable (_ file: String) async -> Result<String, ArrivalProcessor.Refusal>
    ) async -> Result<String, ArrivalProcessor.Refusal>?

    /// What the expiry sweep does besides deleting expired uploads (nothing, for some stores).
    func housekeeping(now: Date) async

    /// Takes the upload for one request in this process; false when another request holds it.
    func lock(_ id: String) -> Bool
    func unlock(_ id: String)
}

extension PartialUploadStore {
    /// The uploads still receiving bytes and not expired.
    func unfinished(now: Date = Date()) async throws(UploadStoreFailure) -> [TusUpload] {
        try await all().filter { $0.state == .receiving && $0.expiresAt > now }
    }
}

/// One request's bytes going into an upload. Nothing written counts until `sync()` (or until the store
/// made part of it durable on its own); `rollback()` undoes this request (a checksum mismatch, too many bytes).
protocol UploadAppender: Sendable {
    /// Bytes written by this request so far.
    var count: Int64 { get }
    func write(_ buffer: ByteBuffer) async throws(UploadStoreFailure)
    /// Makes the written bytes durable; after this they may be acknowledged.
    func sync() async throws(UploadStoreFailure)
    /// Makes the written bytes readable where `finishing` reads them, durable or not: for the request that brings
    /// the last byte, whose bytes are not acknowledged before the photo made from them is stored (and durable).
    func writeOut() async throws(UploadStoreFailure)
    func rollback() async
}

extension UploadAppender {
    func writeOut() async throws(UploadStoreFailure) { try await sync() }
}

struct UploadStoreFailure: Error, CustomStringConvertible {
    enum Kind {
        /// Storage failed (disk, bucket, database).
        case storage
        /// Another request (on another instance) wrote to the upload first.
        case conflict
        /// The upload is in more pieces than the store keeps: the client sends too small PATCH bodies.
        case tooManyPieces
    }

    var kind: Kind = .storage
    var description: String
}

/// Requests writing to uploads in this process: one at a time per upload.
final class UploadLocks: Sendable {
    private let held = Mutex<Set<String>>([])

    func lock(_ id: String) -> Bool { held.withLock { $0.insert(id).inserted } }
    func unlock(_ id: String) { _ = held.withLock { $0.remove(id) } }
}
