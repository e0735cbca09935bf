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

    /// Uploads there must be strictly smaller than this many bytes.
    public var sizeLimit: Int {
        switch self {
        case .groupPhoto, .profileImage: 5 * 1024 * 1024
        case .userPhoto: 10 * 1024 * 1024
        }
    }

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

public enum StorageRules {
    /// The most any upload may be: the largest path limit (album photos, 10 MiB) minus one byte.
    public static let largestUpload = 10 * 1024 * 1024 - 1

    /// The characters identifiers may use: ASCII letters and digits and `. _ - @ + |` (what identity
    /// providers put in user ids: Firebase's alphanumerics, Auth0's `provider|id`, e-mail-like ids).
    static func isIdentifierByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        case UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "@"), UInt8(ascii: "+"), UInt8(ascii: "|"): true
        default: false
        }
    }

    /// An identifier used as a path segment (user id, group id, album, file name): 1–128 characters of
    /// the identifier alphabet (`isIdentifierByte`), not starting with `.` (so never `.`, `..` or a hidden
    /// file). No spaces, no separators, no control or invisible characters: what is stored is exactly what is shown.
    public static func validated(_ id: String, _ what: String) throws(ServiceError) -> String {
        guard !id.isEmpty else { throw .invalidIdentifier("the \(what) is empty") }
        guard id != ".", id != ".." else { throw .invalidIdentifier("the \(what) \"\(id)\" is a relative path") }
        guard id.utf8.allSatisfy(isIdentifierByte) else {
            if id.contains("/") || id.contains("\\") { throw .invalidIdentifier("the \(what) \(id.debugDescription) contains a path separator") }
            throw .invalidIdentifier("the \(what) \(id.debugDescription) has characters outside A–Z a–z 0–9 . _ - @ + |")
        }
        guard !id.hasPrefix(".") else { throw .invalidIdentifier("the \(what) \(id.debugDescription) starts with a dot") }
        guard id.utf8.count <= 128 else { throw .invalidIdentifier("the \(what) is longer than 128 bytes") }
        return id
    }

    /// May `caller` write `path`? `isAdmin(groupId)` answers whether the caller administers a group.
    public static func authorize(caller: String, writing path: StoragePath, isAdmin: (String) throws -> Bool) throws(ServiceError) {
        switch path {
        case .groupPhoto(let group):
            let admin: Bool
            do { admin = try isAdmin(group) } catch { throw .storage("\(error)") }
            guard admin else { throw .notAllowed("only the admins of group \(group) change its photo") }
        case .profileImage(let owner, _), .userPhoto(let owner, _, _):
            guard owner == caller else { throw .notAllowed("\(caller) may not write to \(path.key) (only \(owner) writes there)") }
        }
    }

    /// May signed-in `caller` read `path`? Profile pictures and album photos: anyone signed in (the app's
    /// `allow read`); a group's photo: its members. `isMember(groupId)` answers whether the caller is one.
    /// (A download URL's token stands instead of a caller, for that one version of that one photo.)
    public static func mayRead(caller: String, _ path: StoragePath, isMember: (String) throws -> Bool) throws(ServiceError) -> Bool {
        switch path {
        case .groupPhoto(let group):
            do { return try isMember(group) } catch { throw .storage("\(error)") }
        case .profileImage, .userPhoto:
            return true
        }
    }

    /// The bytes may be uploaded to `path`: a JPEG, smaller than the path's limit.
    public static func checkUpload(_ bytes: [UInt8], to path: StoragePath) throws(ServiceError) {
        guard (try? ImageFormat.sniff(bytes)) == .jpeg else { throw .unsupportedPhoto("uploads must be JPEG images") }
        guard bytes.count < path.sizeLimit else { throw .photoTooLarge(bytes: bytes.count, limit: path.sizeLimit) }
    }
}
