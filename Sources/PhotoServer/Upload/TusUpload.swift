import Foundation
import PhotoFiles
import PhotoServices

/// One tus upload the server holds.
struct TusUpload: Codable, Sendable, Equatable {
    enum State: String, Codable, Sendable {
        /// Bytes are arriving (or all arrived and the photo is not stored yet).
        case receiving
        /// All bytes arrived, the photo was normalised and stored at `key` (its stored photo's record says where).
        case stored
    }

    var id: String
    /// The `sub` of the token that created it: the only caller who may see or change it.
    var owner: String
    var ownerName: String?
    /// Where its photo goes: parsed once, when the upload is created, and kept (as its key) in the record.
    var path: StoragePath
    var length: Int64
    var metadata: [String: String]
    var createdAt: Date
    var expiresAt: Date
    var state: State

    /// The storage key of `path`.
    var key: String { path.key }

    enum CodingKeys: String, CodingKey {
        case id, owner, ownerName, length, metadata, createdAt, expiresAt, state
        case path = "key"
    }

    /// Upload ids are 32 lower-case hex digits; anything else names no upload (and no file or object).
    static func isValidID(_ id: String) -> Bool {
        id.utf8.count == 32 && id.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    static func newID() -> String {
        randomHex(byteCount: 16)
    }
}
