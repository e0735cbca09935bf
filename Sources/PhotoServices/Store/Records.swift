public import Foundation

public struct User: Codable, Sendable, Equatable {
    public var id: String
    public var displayName: String
    public var email: String?
    /// The key of their profile picture, whose stored photo (`StoredPhotos`) says where it is; nil: none.
    public var profilePhotoKey: String?
    public var createdAt: Date

    public init(id: String, displayName: String, email: String? = nil) {
        self.id = id
        self.displayName = displayName
        self.email = email
        createdAt = Date()
    }
}

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

/// A group chat. (`Group` is taken by Swift's concurrency; the table is `chatGroup`.)
public struct ChatGroup: Codable, Sendable, Equatable {
    public var id: String
    public var name: String
    public var createdBy: String
    /// The state of its photo, which is stored at `StoragePath.groupPhoto(groupId:)` once `done`.
    public var photoState: PhotoState
    public var photoError: String?
    public var createdAt: Date
    public var updatedAt: Date
}

public struct GroupMember: Codable, Sendable, Equatable {
    public var groupId: String
    public var userId: String
    public var isAdmin: Bool
}

public struct Message: Codable, Sendable, Equatable {
    public var id: Int64?
    public var groupId: String
    public var sender: String
    public var text: String
    public var isSystem: Bool
    public var createdAt: Date
}

public struct Notification: Codable, Sendable, Equatable {
    public var id: Int64?
    public var userId: String
    public var groupId: String
    public var kind: String
    /// Opens the group in the app, e.g. `photoprep://groups/{groupId}`.
    public var deepLink: String
    public var createdAt: Date
}

public struct AlbumPhoto: Codable, Sendable, Equatable {
    public var id: String
    public var userId: String
    public var album: String
    /// Where it is stored (`StoredPhotos` says where that is, once `done`).
    public var key: String
    public var state: PhotoState
    public var createdAt: Date
}

/// A photo being prepared and uploaded, persisted so that it survives a restart.
public struct PhotoJob: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable {
        case group, profile, album
    }

    public var id: String
    public var kind: Kind
    /// Who asked (their credentials authorise the upload).
    public var caller: String
    /// The group id, user id or album photo id the photo belongs to.
    public var subject: String
    public var key: String
    public var preset: String
    /// The staged original (a copy: the caller's file may go away).
    public var originalPath: String
    /// The prepared JPEG, once prepared: retries re-use it.
    public var preparedPath: String?
    public var state: PhotoState
    public var error: String?
    public var attempts: Int
    public var url: String?
    /// The upload at the destination (e.g. the tus upload URL) and the bytes it acknowledged, as of
    /// the last second of progress.
    public var uploadLocation: String?
    public var uploadedBytes: Int64
    /// The pending group creation (its id) this photo waits for: a client does not upload a group's
    /// photo before the server has the group. Nil: ready to run.
    public var waitsFor: String? = nil
    /// Where the photo goes (the services' or client's storage destination when the job was created): only
    /// a runner uploading there takes the job. Nil: a job from before destinations were recorded, taken by any.
    public var destination: String? = nil
    /// The focal point the photo's square thumbnails are centred on (`x,y`, as Mastodon's `focus`), sent with its
    /// upload. Nil: the server's attention rule.
    public var focus: String? = nil
    /// The runner holding the job (a random id per runner, not a process or a host) and when its lease
    /// ends unless renewed; a job whose lease ran out is taken over by any runner.
    public var leaseOwner: String?
    public var leaseExpiresAt: Date?
    public var createdAt: Date
    public var updatedAt: Date
}

/// A stored object that should be gone — a replaced profile picture — but whose deletion failed; `sync()`
/// tries again.
public struct StaleObject: Codable, Sendable, Equatable {
    public var url: String
    /// Whose credentials delete it.
    public var caller: String
    /// Why the last attempt failed.
    public var error: String
    public var attempts: Int
    public var updatedAt: Date
}

/// `Notification` under a name that does not clash with Foundation's (for modules that import both).
public typealias GroupNotification = Notification

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
}

/// A thumbnail of a stored photo (`PrepareOptions.thumbnails`): read with the photo's token and version.
public struct StoredThumbnail: Codable, Sendable, Equatable {
    public var key: String
    /// The long edge it was made for; `width` × `height` its size.
    public var edge: Int
    public var width: Int
    public var height: Int
    public var location: String
    public var sha256: String
    public var size: Int64
    /// Its WebP (the same pixels), when one was made: where, its SHA-256 and size.
    public var webpLocation: String? = nil
    public var webpSha256: String? = nil
    public var webpSize: Int64? = nil
}
