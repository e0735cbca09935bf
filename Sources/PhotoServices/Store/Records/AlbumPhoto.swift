public import Foundation

public struct AlbumPhoto: Codable, Sendable, Equatable {
    public var id: String
    public var userId: String
    public var album: String
    /// Where it is stored (`StoredPhotos` says where that is, once `done`).
    public var key: String
    public var state: PhotoState
    public var createdAt: Date
}
