import NIOCore

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
    /// The request is done with it (whatever happened): what it made durable is now simply what the store holds.
    func end()
}

extension UploadAppender {
    func writeOut() async throws(UploadStoreFailure) { try await sync() }
    func end() {}
}
