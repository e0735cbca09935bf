public import Foundation

/// A photo in storage as readers get it: where it is, which version (its content's SHA-256, the strong
/// `ETag`), and the download token that lets anyone holding its URL read exactly that version (like
/// Firebase's download tokens). A new photo at the key, or a regenerated token, is a new token.
public struct StoredPhoto: Codable, Sendable, Equatable {
    public var key: String
    /// Where storage has it (`file://…`, or the bucket's URL).
    public var location: String
    /// The SHA-256 of its bytes, in hex.
    public var sha256: String
    public var size: Int64
    public var token: String
    public var storedAt: Date
    /// The SSIMULACRA2 score it was encoded to against the resized photo (nil when it was kept as it arrived).
    public var score: Double?
    /// Its placeholder: a ThumbHash in base64 (`PrepareReport.placeholder`).
    public var placeholder: String? = nil
    /// When it was taken, as its EXIF said, with the offset it was taken at (ISO 8601; `PrepareReport.takenAt`);
    /// nil when it did not say, or the server keeps no capture times.
    public var takenAt: String? = nil
    /// `takenAt` as an instant: what albums are listed by.
    public var takenAtUTC: Date? = nil
    /// The focal point its square thumbnails are centred on, as the client gave it (`x,y`, `FocalPoint`); nil: none given.
    public var focus: String? = nil
    /// Whose storage quota it counts in (`StoragePath.owner`): nil for a group's photo.
    public var owner: String? = nil
    /// Who uploaded it (nil: stored before this was recorded).
    public var uploadedBy: String? = nil
    /// Why the app's review quarantined it (`ReviewVerdict.quarantine`): its links go only to `uploadedBy` and the
    /// server's admins until an admin releases it. nil: readable as any photo.
    public var quarantine: String? = nil
}
