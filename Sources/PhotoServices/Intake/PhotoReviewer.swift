public import PhotoPrep

/// Whoever has a say on a prepared photo before it is stored (the app's moderation: `photoprep serve --review-url`):
/// `PhotoIntake.take` asks after preparing the photo and checking the caller's right and room, before storing anything.
public protocol PhotoReviewer: Sendable {
    func review(_ photo: PreparedPhoto, key: String, caller: String, displayName: String?) async -> ReviewVerdict
}

/// A reviewer's answer.
public enum ReviewVerdict: Sendable, Equatable {
    /// Stored as any photo.
    case accept
    /// Not stored; the client is told the reason (422).
    case reject(reason: String)
    /// Stored and recorded, but its links go only to its uploader and the server's admins until an admin releases it.
    case quarantine(reason: String)
    /// The reviewer could not say (down, slow, garbage) and its policy is to refuse: nothing stored, the client asks
    /// again (503). The reason is the reviewer's to log; the client is not told it.
    case unavailable
}
