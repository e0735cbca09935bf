import Foundation
import PhotoServices

/// The rows a `SharedUploadStore` keeps in the shared database: an upload's (`tusUpload`) and its pieces'
/// (`tusUploadPiece`).
extension SharedUploadStore {
    /// The row of `tusUpload`.
    struct Row: Codable {
        var id: String
        var owner: String
        var ownerName: String?
        var key: String
        var length: Int64
        var metadata: String
        var createdAt: Date
        var expiresAt: Date
        var state: String
        var received: Int64
        var finishOwner: String?
        var finishLeaseExpiresAt: Date?

        init(_ upload: TusUpload) {
            id = upload.id
            owner = upload.owner
            ownerName = upload.ownerName
            key = upload.key
            length = upload.length
            metadata = String(decoding: (try? JSONEncoder().encode(upload.metadata)) ?? Data("{}".utf8), as: UTF8.self)
            createdAt = upload.createdAt
            expiresAt = upload.expiresAt
            state = upload.state.rawValue
            received = 0
        }

        /// Some instance holds its finishing under a lease still running at `now`.
        func isBeingFinished(at now: Date) -> Bool {
            finishOwner != nil && (finishLeaseExpiresAt ?? .distantPast) >= now
        }

        /// The upload the row records (its key parsed: one that names no path fails as a corrupt row).
        func upload() throws -> TusUpload {
            TusUpload(
                id: id, owner: owner, ownerName: ownerName, path: try StoragePath(key: key), length: length,
                metadata: (try? JSONDecoder().decode([String: String].self, from: Data(metadata.utf8))) ?? [:], createdAt: createdAt,
                expiresAt: expiresAt, state: TusUpload.State(rawValue: state) ?? .receiving)
        }
    }

    struct Piece: Codable {
        var upload: String
        var start: Int64
        var length: Int64
        var objectKey: String
    }
}
