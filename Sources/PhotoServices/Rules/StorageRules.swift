import PhotoPrep

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
