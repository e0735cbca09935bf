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
