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
    /// Its placeholder: a ThumbHash in base64, to draw (any ThumbHash decoder) while the photo loads.
    public var placeholder: String?
    /// When it was taken, as its EXIF said (ISO 8601 with the offset it was taken at): the album's order.
    public var takenAt: String?
}
