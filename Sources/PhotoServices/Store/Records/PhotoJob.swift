public import Foundation

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
