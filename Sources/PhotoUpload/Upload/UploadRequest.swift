/// What to upload where: the object key, its type and metadata, and the caller's credentials.
public struct UploadRequest: Sendable, Hashable {
    /// The object's key under the destination, e.g. `group_photos/{groupId}/photo.jpg`.
    public var key: String
    public var contentType: String
    /// Extra metadata sent with the upload (tus `Upload-Metadata`).
    public var metadata: [String: String]
    /// Sent as the `Authorization` header, e.g. `Bearer eyJ…`.
    public var authorization: String?

    public init(key: String, contentType: String = "image/jpeg", metadata: [String: String] = [:], authorization: String? = nil) {
        self.key = key
        self.contentType = contentType
        self.metadata = metadata
        self.authorization = authorization
    }
}

/// Bytes the server acknowledged and bytes sent so far, out of the total.
public struct UploadProgress: Sendable, Hashable, Codable {
    /// Bytes the server confirmed it holds (tus `Upload-Offset`): never goes backwards.
    public var acknowledged: Int64
    /// Bytes handed to the network, at least `acknowledged`.
    public var sent: Int64
    public var total: Int64

    /// `acknowledged / total`, 1 for an empty upload.
    public var fraction: Double { total == 0 ? 1 : Double(acknowledged) / Double(total) }
}

/// One event of an upload. Every upload's event stream ends with exactly one terminal event:
/// `finished`, `failed` or `cancelled`.
public enum UploadEvent: Sendable, Hashable {
    case progress(UploadProgress)
    /// Paused by `pause()`: nothing was deleted; `resume()` continues.
    case paused(UploadProgress)
    /// The upload is complete; `location` is the object's URL.
    case finished(location: String)
    case failed(UploadError)
    /// Cancelled by `cancel()` or task cancellation; the partial upload was deleted.
    case cancelled

    public var isTerminal: Bool {
        switch self {
        case .finished, .failed, .cancelled: true
        case .progress, .paused: false
        }
    }
}

/// Why an upload failed. `kind` is a struct with static members so that kinds can be added later.
public struct UploadError: Error, Sendable, Hashable, CustomStringConvertible {
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }

        /// 401 or 403: the credentials do not allow this upload.
        public static let notAuthorized = Kind("not authorised")
        /// 413: the upload is larger than the destination accepts.
        public static let tooLarge = Kind("too large")
        /// 400, 412, 415 and other client errors: the request itself is wrong; retrying will not help.
        public static let rejected = Kind("rejected")
        /// Transient failures went on past the retry budget.
        public static let retriesExhausted = Kind("retries exhausted")
        /// The server answered something the protocol does not allow.
        public static let protocolViolation = Kind("protocol violation")
        /// The file to upload could not be read, or the local store could not be written.
        public static let io = Kind("I/O error")
    }

    public var kind: Kind
    public var message: String
    /// The HTTP status behind the error, when there was one.
    public var status: Int?

    public init(_ kind: Kind, _ message: String, status: Int? = nil) {
        self.kind = kind
        self.message = message
        self.status = status
    }

    public var description: String { "upload failed (\(kind)): \(message)" }
}

/// How uploads behave.
public struct UploadConfiguration: Sendable, Hashable {
    /// Bytes in the first request that carries data, and again after any failure. Each acknowledged
    /// chunk doubles the next one, up to `maxChunkSize` (set both equal for fixed chunks).
    public var chunkSize: Int = 256 * 1024
    /// The largest chunk; memory use is bounded by this, whatever the file size.
    public var maxChunkSize: Int = 8 * 1024 * 1024
    /// Transient failures are retried with exponential backoff for at most this long (Firebase's default).
    public var maxRetryDuration: Duration = .seconds(600)
    /// Backoff before the first retry; doubles each time, up to `maxBackoff`, with jitter.
    public var initialBackoff: Duration = .milliseconds(200)
    public var maxBackoff: Duration = .seconds(10)
    /// Timeout of one HTTP request.
    public var requestTimeout: Duration = .seconds(30)
    /// Send per-chunk checksums when the server offers the tus checksum extension with SHA-1.
    public var checksums: Bool = true
    /// Limit the upload rate (bytes per second), e.g. on metered networks; nil sends as fast as possible.
    public var maxBytesPerSecond: Int?
    /// Keep a finished upload's journal entry (at full offset) until the owner calls
    /// `UploadJournal.remove`: an owner that records the result elsewhere (a database) and dies before
    /// doing so finds the upload finished on the next run instead of sending it again.
    public var keepsFinishedInJournal = false
    /// S3: objects up to this size go in one streamed PUT; larger ones as a multipart upload.
    public var multipartThreshold: Int = 8 * 1024 * 1024
    /// S3 multipart part size (S3's minimum is 5 MiB, except for the last part).
    public var partSize: Int = 8 * 1024 * 1024
    /// S3 parts sent at once; memory use is bounded by `partSize × parallelParts`.
    public var parallelParts: Int = 4

    public init() {}
}
