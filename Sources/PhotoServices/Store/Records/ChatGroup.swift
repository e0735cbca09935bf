public import Foundation

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
