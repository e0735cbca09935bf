/// The requests of a resumable upload, performed against one destination. `UploadSession` drives
/// them with `UploadStateMachine`; the tus client and the local store implement them.
protocol UploadTransport: Sendable {
    /// Creates an upload of `length` bytes; returns its location.
    func create(length: Int64, request: UploadRequest) async throws(TransportFailure) -> String
    /// The offset the destination holds for the upload at `location`.
    func query(_ location: String, request: UploadRequest) async throws(TransportFailure) -> Int64
    /// Appends `chunk` at `offset`; `sent` is called as bytes go out. Returns the new offset.
    func send(
        _ location: String, offset: Int64, chunk: [UInt8], request: UploadRequest, sent: @escaping @Sendable (Int) -> Void
    ) async throws(TransportFailure) -> Int64
    /// Deletes a partial upload.
    func terminate(_ location: String, request: UploadRequest) async throws(TransportFailure)
    /// The URL of the finished object.
    func objectLocation(_ location: String, request: UploadRequest) -> String
}

/// A request that did not succeed: an HTTP status, or no answer at all.
enum TransportFailure: Error, Equatable {
    case status(Int, String)
    case transport(String)
    case cancelled
}
