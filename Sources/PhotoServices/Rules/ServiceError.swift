import Foundation

/// Why a service call was refused or failed. Every rule violation has its own case, so a caller
/// (or a test) can tell them apart, and a message that names the value at fault.
public enum ServiceError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The caller, or a user named in the request, is not known.
    case unknownUsers([String])
    /// The group name is empty after trimming and removing control characters.
    case groupNameEmpty
    /// The group name is longer than `GroupRules.maxNameLength` characters.
    case groupNameTooLong(Int)
    /// The group name has a character no name may have (`NameRules.checkCharacters`).
    case groupNameInvalid(String)
    /// Fewer than `GroupRules.minOtherParticipants` participants besides the creator.
    case tooFewParticipants(Int)
    /// More than `GroupRules.maxMembers` members, the creator included.
    case tooManyMembers(Int)
    /// An id or album name that would not be a single safe path segment.
    case invalidIdentifier(String)
    /// A display name with nothing visible in it, or too long.
    case invalidName(String)
    /// The caller may not write there, or may not change that.
    case notAllowed(String)
    /// Not a photo the pipeline decodes, or an upload that is not a JPEG.
    case unsupportedPhoto(String)
    /// The prepared photo is not smaller than the path's limit.
    case photoTooLarge(bytes: Int, limit: Int)
    /// No such group, photo or upload.
    case notFound(String)
    /// The operation does not apply in the current state (e.g. retrying a finished upload).
    case invalidState(String)
    /// The database or the storage failed, or did not answer: trying again later may succeed.
    case storage(String)
    /// The photo would put its owner over their storage quota (`StorageQuota`): the quota and the usage.
    case overQuota(String)
    /// The storage has no room for the photo (a full disk, a quota): trying again once there is room may succeed.
    case storageFull(String)
    /// The server refused the request (a client in remote mode): its reason.
    case rejected(String)
    /// The app's review of the prepared photo refused it (`PhotoReviewer`): its reason.
    case rejectedByReview(String)

    public var description: String {
        switch self {
        case .unknownUsers(let ids): "unknown user\(ids.count == 1 ? "" : "s"): \(ids.joined(separator: ", "))"
        case .groupNameEmpty: "the group name is empty"
        case .groupNameTooLong(let n): "the group name has \(n) characters; at most \(GroupRules.maxNameLength) are allowed"
        case .groupNameInvalid(let detail): detail
        case .tooFewParticipants(let n): "a group needs at least \(GroupRules.minOtherParticipants) participants besides the creator; got \(n)"
        case .tooManyMembers(let n): "a group has at most \(GroupRules.maxMembers) members; this one would have \(n)"
        case .invalidIdentifier(let detail): "invalid identifier: \(detail)"
        case .invalidName(let detail): "invalid name: \(detail)"
        case .notAllowed(let detail): "not allowed: \(detail)"
        case .unsupportedPhoto(let detail): "unsupported photo: \(detail)"
        case .photoTooLarge(let bytes, let limit): "the photo has \(bytes) bytes; uploads there must be smaller than \(limit)"
        case .notFound(let what): "not found: \(what)"
        case .invalidState(let detail): detail
        case .storage(let detail): "storage error: \(detail)"
        case .storageFull(let detail): "storage full: \(detail)"
        case .overQuota(let detail): "over quota: \(detail)"
        case .rejected(let detail): detail
        case .rejectedByReview(let reason): "the photo was rejected: \(reason)"
        }
    }
}
