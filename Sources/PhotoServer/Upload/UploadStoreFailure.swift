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
