import Foundation
import PhotoFiles

struct UploadStoreFailure: Error, CustomStringConvertible {
    enum Kind {
        /// Storage failed (disk, bucket, database).
        case storage
        /// The disk has no room (or the quota ran out) for the bytes.
        case full
        /// Another request (on another instance) wrote to the upload first.
        case conflict
        /// The upload is in more pieces than the store keeps: the client sends too small PATCH bodies.
        case tooManyPieces
        /// Bytes the store acknowledged are no longer there (a piece gone from the bucket): the upload cannot be
        /// finished, and is started again.
        case gone
    }

    var kind: Kind = .storage
    var description: String

    /// A system call on `path` that failed with `code` (`errno`): `full` for no room (ENOSPC, EDQUOT), else `storage`.
    static func system(_ path: String, _ action: String, code: Int32 = errno) -> UploadStoreFailure {
        UploadStoreFailure(kind: code == ENOSPC || code == EDQUOT ? .full : .storage, description: "\(path): \(action): \(String(cString: strerror(code)))")
    }
}

extension UploadStoreFailure {
    /// A file that could not be opened, written or flushed: `full` for no room, else `storage`.
    init(_ error: AtomicFile.WriteError) {
        self.init(kind: error.full ? .full : .storage, description: error.message)
    }
}
