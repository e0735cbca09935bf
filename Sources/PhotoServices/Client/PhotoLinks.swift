/// A stored photo as `photoprep serve` shows it (`GET /v1/groups/{id}/photo`, `/v1/me/photo`): its
/// state, where storage has it, and the download URLs an image view loads without a token.
public struct PhotoLinks: Codable, Sendable, Equatable {
    public struct Thumbnail: Codable, Sendable, Equatable {
        public var edge: Int
        public var width: Int
        public var height: Int
        public var downloadURL: String
    }

    /// none, pending, uploading, ready, failed, cancelled.
    public var state: String
    public var url: String?
    public var downloadURL: String?
    public var thumbnails: [Thumbnail]?

    public init(state: String, url: String?, downloadURL: String? = nil, thumbnails: [Thumbnail]? = nil) {
        self.state = state
        self.url = url
        self.downloadURL = downloadURL
        self.thumbnails = thumbnails
    }
}
