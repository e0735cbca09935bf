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

    public init(acknowledged: Int64, sent: Int64, total: Int64) {
        (self.acknowledged, self.sent, self.total) = (acknowledged, sent, total)
    }

    /// `acknowledged / total`, 1 for an empty upload.
    public var fraction: Double { total == 0 ? 1 : Double(acknowledged) / Double(total) }
}

/// One event of an upload. Every upload's event stream ends with exactly one terminal event:
/// `finished`, `failed` or `cancelled`.
public enum UploadEvent: Sendable, Hashable {
    /// The upload exists at the destination, at `location` (created now, or a journalled one the
    /// destination confirmed): once per run, before any byte it acknowledged is reported. Whoever records
    /// where an upload stands records this.
    case started(location: String)
    case progress(UploadProgress)
    /// A request failed transiently; the next attempt starts after `retry.delay`.
    case retrying(UploadRetry)
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
        case .started, .progress, .retrying, .paused: false
        }
    }
}

/// A retry the uploader is about to make: why, which attempt, and when.
public struct UploadRetry: Sendable, Hashable, CustomStringConvertible {
    /// Failures in a row without progress, this one included.
    public var attempt: Int
    /// What failed, e.g. `PATCH …: connection reset by peer` or `HTTP 503: …`.
    public var reason: String
    /// The wait before the next attempt.
    public var delay: Duration

    public var description: String {
        "retry \(attempt) in \((delay.seconds * 10).rounded() / 10) s: \(reason)"
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
        /// Transient failures went on past the retry budget, after the destination had answered.
        public static let retriesExhausted = Kind("retries exhausted")
        /// The destination never answered within the first-contact budget (connection refused, no
        /// such host, TLS failure, no answer): likely a wrong address or a server that is down.
        public static let unreachable = Kind("unreachable")
        /// The server answered something the protocol does not allow.
        public static let protocolViolation = Kind("protocol violation")
        /// The file to upload could not be read, or the local store could not be written.
        public static let io = Kind("I/O error")
    }

    public var kind: Kind
    public var message: String
    /// The HTTP status behind the error, when there was one.
    public var status: Int?

    /// Retrying later may succeed: the destination could not be reached, or kept failing transiently
    /// (an offline queue keeps such work as pending; the journal keeps the partial upload).
    public var isTransient: Bool { kind == .retriesExhausted || kind == .unreachable }

    public init(_ kind: Kind, _ message: String, status: Int? = nil) {
        self.kind = kind
        self.message = message
        self.status = status
    }

    public var description: String { "upload failed (\(kind)): \(message)" }
}

/// How uploads behave.
/// The resumable-upload protocol of an `http(s)://` destination.
public enum HTTPUploadProtocol: Sendable, Hashable {
    /// The server says (`OPTIONS`): the IETF draft when it answers with `Upload-Draft-Interop-Version`
    /// (and not `Tus-Version`), tus otherwise.
    case automatic
    /// tus 1.0.0: the destination is the creation endpoint (e.g. `https://host/files/`).
    case tus
    /// draft-ietf-httpbis-resumable-upload at interop version 3, 5 or 6 (Apple's `URLSession`): an upload
    /// is created at the destination followed by its key (e.g. `https://host/uploads/` + `group_photos/…`).
    case ietfDraft(interopVersion: Int)
}

public struct UploadConfiguration: Sendable, Hashable {
    /// Bytes in the first request that carries data, and again after any failure. Each acknowledged
    /// chunk doubles the next one, up to `maxChunkSize` (set both equal for fixed chunks).
    public var chunkSize: Int = 256 * 1024
    /// The largest chunk; memory use is bounded by this, whatever the file size.
    public var maxChunkSize: Int = 8 * 1024 * 1024
    /// Transient failures are retried with exponential backoff until the upload has gone this long
    /// without progress (Firebase's default); every request is kept inside it.
    public var maxRetryDuration: Duration = .seconds(600)
    /// Until the destination has answered once, it is given only this long (connection refused, no
    /// such host, TLS failure): a wrong address fails in seconds, not after `maxRetryDuration`.
    public var firstContactDuration: Duration = .seconds(10)
    /// Origins (`https://host:port`) besides the destination's own that may receive the upload and its
    /// credentials, e.g. a tus server that answers with upload URLs on a storage host. Any other origin
    /// in a `Location` is refused; redirects are never followed.
    public var trustedOrigins: Set<String> = []
    /// Backoff before the first retry; doubles each time, up to `maxBackoff`, with jitter.
    public var initialBackoff: Duration = .milliseconds(200)
    public var maxBackoff: Duration = .seconds(10)
    /// Timeout of one HTTP request (shortened to what is left of the retry budget).
    public var requestTimeout: Duration = .seconds(30)
    /// Send per-chunk checksums when the server offers the tus checksum extension with SHA-1.
    public var checksums: Bool = true
    /// Limit the upload rate (bytes per second), e.g. on metered networks; nil sends as fast as possible.
    public var maxBytesPerSecond: Int?
    /// Keep a finished upload's journal entry (at full offset) until the owner calls
    /// `UploadJournal.remove`: an owner that records the result elsewhere (a database) and dies before
    /// doing so finds the upload finished on the next run instead of sending it again.
    public var keepsFinishedInJournal = false
    /// How an `http(s)://` destination is spoken to: asked (`OPTIONS`), tus 1.0, or the IETF draft.
    public var httpProtocol: HTTPUploadProtocol = .automatic
    /// S3: objects up to this size go in one streamed PUT; larger ones as a multipart upload.
    public var multipartThreshold: Int = 8 * 1024 * 1024
    /// S3 multipart part size (S3's minimum is 5 MiB, except for the last part).
    public var partSize: Int = 8 * 1024 * 1024
    /// S3 parts sent at once; memory use is bounded by `partSize × parallelParts`.
    public var parallelParts: Int = 4

    public init() {}
}
