/// A stored photo as `photoprep serve` shows it (`GET /v1/groups/{id}/photo`, `/v1/me/photo`): its
/// state, where storage has it, and the download URLs an image view loads without a token.
public struct PhotoLinks: Codable, Sendable, Equatable {
    public struct Thumbnail: Codable, Sendable, Equatable {
        public var edge: Int
        public var width: Int
        public var height: Int
        /// JPEG, or WebP to a client that accepts image/webp when the thumbnail has one.
        public var downloadURL: String
        /// Its WebP, when the server made one (the same picture in fewer bytes).
        public var webpDownloadURL: String?
    }

    /// none, pending, uploading, ready, failed, cancelled.
    public var state: String
    public var url: String?
    public var downloadURL: String?
    public var thumbnails: [Thumbnail]?
    /// Its placeholder: a ThumbHash in base64, to draw (any ThumbHash decoder) while the photo loads.
    public var placeholder: String?
    /// When it was taken, as its EXIF said (ISO 8601 with the offset it was taken at); nil when unknown.
    public var takenAt: String?
    /// The focal point its square thumbnails are centred on (`x,y`, as Mastodon's focus), when one was given.
    public var focus: String?

    public init(state: String, url: String?, downloadURL: String? = nil, thumbnails: [Thumbnail]? = nil) {
        self.state = state
        self.url = url
        self.downloadURL = downloadURL
        self.thumbnails = thumbnails
    }
}
