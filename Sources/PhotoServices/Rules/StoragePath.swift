public import PhotoPrep

/// Where photos live in storage, and who may write there — the app's storage rules, in one place.
/// The services check them before any byte leaves; `photoprep serve` (PhotoServer) enforces the same
/// rules on every request it receives, so a forged request is refused too.
///
/// | path | who writes | limit |
/// |---|---|---|
/// | `group_photos/{groupId}/photo.jpg` | the group's admins | < 5 MiB |
/// | `profile_images/{userId}/{file}` | that user | < 5 MiB |
/// | `user_photos/{userId}/{album}/{file}` | that user | < 10 MiB |
public enum StoragePath: Sendable, Hashable {
    case groupPhoto(groupId: String)
    case profileImage(userId: String, file: String)
    case userPhoto(userId: String, album: String, file: String)

    /// The object key.
    public var key: String {
        switch self {
        case .groupPhoto(let group): "group_photos/\(group)/photo.jpg"
        case .profileImage(let user, let file): "profile_images/\(user)/\(file)"
        case .userPhoto(let user, let album, let file): "user_photos/\(user)/\(album)/\(file)"
        }
    }

    /// Where the photo's thumbnail for a long edge is stored: under `thumbnails/`, a prefix no one may
    /// upload to, so that no upload can overwrite a thumbnail.
    public func thumbnailKey(edge: Int) -> String { Self.thumbnailKey(of: key, edge: edge) }

    /// `thumbnailKey(edge:)` of the path whose key is `key`.
    public static func thumbnailKey(of key: String, edge: Int) -> String { Thumbnail.key(of: key, edge: edge) }

    /// Where the WebP of its thumbnail at `edge` is stored (`Thumbnail.webpKey`).
    public func webpThumbnailKey(edge: Int) -> String { Thumbnail.webpKey(of: key, edge: edge) }

    /// Whose storage quota the photo counts in (`StorageQuota`): a user's for their own folders, nobody's for a group's.
    public var owner: String? {
        switch self {
        case .groupPhoto: nil
        case .profileImage(let user, _), .userPhoto(let user, _, _): user
        }
    }

    /// Uploads there must be strictly smaller than this many bytes.
    public var sizeLimit: Int {
        switch self {
        case .groupPhoto, .profileImage: 5 * 1024 * 1024
        case .userPhoto: Self.largestSizeLimit
        }
    }

    /// The largest upload any path takes (album photos').
    public static let largestSizeLimit = 10 * 1024 * 1024

    /// The pipeline preset photos stored here are prepared with: group photos 2048 px, profile
    /// pictures 1024 px (both under 500 KiB), album photos the photo preset (2048 px, under 5 MiB).
    public var preset: PrepareOptions.Preset {
        switch self {
        case .groupPhoto: .group
        case .profileImage: .profile
        case .userPhoto: .photo
        }
    }

    /// Parses and validates a key; every segment must be a valid identifier.
    public init(key: String) throws(ServiceError) {
        // Split by bytes (a `/` is never part of another character in UTF-8), not by grapheme clusters.
        let parts = key.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        switch (parts.first, parts.count) {
        case ("group_photos", 3) where parts[2] == "photo.jpg":
            self = .groupPhoto(groupId: try StorageRules.validated(parts[1], "group id"))
        case ("profile_images", 3):
            self = .profileImage(userId: try StorageRules.validated(parts[1], "user id"), file: try StorageRules.validated(parts[2], "file name"))
        case ("user_photos", 4):
            self = .userPhoto(
                userId: try StorageRules.validated(parts[1], "user id"), album: try StorageRules.validated(parts[2], "album"),
                file: try StorageRules.validated(parts[3], "file name"))
        default:
            throw .notAllowed("\"\(key)\" is not a storage path photos may be written to")
        }
    }
}

/// A path is kept (in an upload's record) as its key, and read back through `init(key:)`: a key that names no path
/// is a corrupt record.
extension StoragePath: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let key = try container.decode(String.self)
        do { self = try StoragePath(key: key) } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "\(key): \(error)")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(key)
    }
}
