public import PhotoUpload

/// What happens to one photo on its way to storage. Every stream ends with exactly one terminal
/// event: `finished`, `pending` (the destination is unreachable; `sync()` tries again), `failed` or
/// `cancelled`.
public enum PhotoJobEvent: Sendable, Hashable {
    case preparing
    /// Bytes the destination acknowledged.
    case progress(UploadProgress)
    /// The upload failed transiently and is tried again after `retry.delay`.
    case retrying(UploadRetry)
    case finished(url: String)
    case pending(reason: String)
    case failed(reason: String)
    case cancelled

    public var isTerminal: Bool {
        switch self {
        case .preparing, .progress, .retrying: false
        case .finished, .pending, .failed, .cancelled: true
        }
    }
}
