/// An album photo as `photoprep serve` lists it (`GET /v1/albums/{album}/photos`).
public struct AlbumPhotoLinks: Codable, Sendable, Equatable {
    public var id: String
    public var album: String
    public var key: String
    /// pending, uploading, ready, failed, cancelled.
    public var state: String
    public var url: String?
    public var downloadURL: String?
    public var thumbnails: [PhotoLinks.Thumbnail]?
}
