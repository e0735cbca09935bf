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
