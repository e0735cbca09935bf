public import Foundation

public struct Notification: Codable, Sendable, Equatable {
    public var id: Int64?
    public var userId: String
    public var groupId: String
    public var kind: String
    /// Opens the group in the app, e.g. `photoprep://groups/{groupId}`.
    public var deepLink: String
    public var createdAt: Date
}

/// `Notification` under a name that does not clash with Foundation's (for modules that import both).
public typealias GroupNotification = Notification
