/// The state of a photo on its way to storage.
public enum PhotoState: String, Codable, Sendable {
    /// No photo.
    case none
    /// Waiting to be prepared and uploaded (also: the destination was unreachable; `sync()` retries).
    case pending
    case uploading
    case done
    /// Refused or failed for a reason retrying alone will not fix; `retry()` tries again.
    case failed
    case cancelled
}
