import Foundation
import Hummingbird
import PhotoPrep
import PhotoServices

// The API's bodies: what a handler returns (`ResponseEncodable`, written by `APIResponseEncoder`) and
// what it reads (`Decodable`, read by `APIRequestDecoder`). Described by `openapi.yaml`.

/// A thumbnail of a photo: the long edge it was made for, its size, and its download URL.
struct ThumbnailBody: Encodable {
    var edge: Int
    var width: Int
    var height: Int
    /// JPEG, or WebP to a client whose `Accept` names image/webp when the thumbnail has one.
    var downloadURL: String
    /// Its WebP, when one was made (the same picture in fewer bytes).
    var webpDownloadURL: String?
}

struct UpdateMe: Decodable {
    var displayName: String
}

/// `PUT …/photo/focus`: the point the photo's square thumbnails are centred on, as Mastodon's `focus` (`x,y`, each −1…1);
/// null for the attention rule's choice.
struct SetFocus: Decodable {
    var focus: String?

    /// The focal point asked for (nil: none), or 422 naming the field.
    func point() throws -> FocalPoint? {
        guard let focus else { return nil }
        guard let point = FocalPoint(parsing: focus) else {
            throw Problem(.unprocessableContent, "focus", "focus: \(FocalPoint.expected), or null", field: "focus")
        }
        return point
    }
}

struct CreateGroup: Decodable {
    var name: String
    var participants: [String]
    var id: String?

    init(from decoder: any Decoder) throws {
        let body = try decoder.container(keyedBy: CodingKeys.self)
        name = try body.decode(String.self, forKey: .name)
        participants = try body.decode([String].self, forKey: .participants)
        id = try body.decodeUnlessAbsent(String.self, forKey: .id)
    }

    private enum CodingKeys: String, CodingKey { case name, participants, id }
}

struct RenameGroup: Decodable {
    var name: String
}

struct ChangeMembers: Decodable {
    var add: [String]?
    var remove: [String]?

    init(from decoder: any Decoder) throws {
        let body = try decoder.container(keyedBy: CodingKeys.self)
        add = try body.decodeUnlessAbsent([String].self, forKey: .add)
        remove = try body.decodeUnlessAbsent([String].self, forKey: .remove)
    }

    private enum CodingKeys: String, CodingKey { case add, remove }
}

extension KeyedDecodingContainer {
    /// An optional field as `openapi.yaml` has it: left out, or a value — never null.
    func decodeUnlessAbsent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        contains(key) ? try decode(T.self, forKey: key) : nil
    }
}

struct UserBody: ResponseEncodable {
    var id: String
    var displayName: String
    /// The picture's download URL, as `profilePhotoDownloadURL` (never where storage keeps it: that stays on the server).
    var profilePhotoURL: String?
    /// The URL an image view loads it from, no `Authorization` needed (`/media/…?v=…&token=…`).
    var profilePhotoDownloadURL: String?
    var profilePhotoThumbnails: [ThumbnailBody]?
    /// The picture's placeholder (a ThumbHash, base64), drawn while it loads.
    var profilePhotoPlaceholder: String?

    init(_ user: User) {
        id = user.id
        displayName = user.displayName
    }
}

struct MemberBody: Encodable {
    var userId: String
    var isAdmin: Bool
}

struct PhotoBody: ResponseEncodable {
    /// none, pending, uploading, ready, failed, cancelled
    var state: String
    /// The photo's download URL, as `downloadURL` (never where storage keeps it: that stays on the server).
    var url: String?
    /// The URL an image view loads it from, no `Authorization` needed (`/media/…?v=…&token=…`).
    var downloadURL: String?
    /// Its thumbnails, smallest first, each with its download URL.
    var thumbnails: [ThumbnailBody]?
    /// Its placeholder (a ThumbHash, base64), drawn while it loads.
    var placeholder: String?
    /// When it was taken (ISO 8601, with the offset it was taken at), if its EXIF said.
    var takenAt: String?
    /// The focal point its square thumbnails are centred on (`x,y`), when one was given.
    var focus: String?
    var error: String?
    var acknowledgedBytes: Int64?
    var totalBytes: Int64?

    init(state: String, error: String?, acknowledgedBytes: Int64?, totalBytes: Int64?) {
        self.state = state
        self.error = error
        self.acknowledgedBytes = acknowledgedBytes
        self.totalBytes = totalBytes
    }

    init(_ group: ChatGroup) {
        let state = group.photoState == .done ? "ready" : group.photoState.rawValue
        self.init(state: state, error: group.photoError, acknowledgedBytes: nil, totalBytes: nil)
    }
}

struct GroupBody: ResponseEncodable {
    var id: String
    var name: String
    var createdBy: String
    var createdAt: Date
    var updatedAt: Date
    var members: [MemberBody]
    var photo: PhotoBody

    init(_ group: ChatGroup, members: [GroupMember]) {
        id = group.id
        name = group.name
        createdBy = group.createdBy
        createdAt = group.createdAt
        updatedAt = group.updatedAt
        self.members = members.map { MemberBody(userId: $0.userId, isAdmin: $0.isAdmin) }
        photo = PhotoBody(group)
    }
}

struct AlbumPhotoBody: Encodable {
    var id: String
    var album: String
    var key: String
    /// The photo's download URL, as `downloadURL`.
    var url: String?
    var downloadURL: String?
    var thumbnails: [ThumbnailBody]?
    /// Its placeholder (a ThumbHash, base64), drawn while it loads.
    var placeholder: String?
    /// When it was taken (ISO 8601, with the offset it was taken at), if its EXIF said: the album's order.
    var takenAt: String?
    var state: String
    var createdAt: Date

    init(_ photo: AlbumPhoto) {
        id = photo.id
        album = photo.album
        key = photo.key
        state = photo.state == .done ? "ready" : photo.state.rawValue
        createdAt = photo.createdAt
    }
}

struct AlbumPage: ResponseEncodable {
    var photos: [AlbumPhotoBody]
}

struct UserPage: ResponseEncodable {
    var users: [UserBody]
    var nextCursor: String?
}

struct MessageBody: Encodable {
    var id: Int64
    var sender: String
    var text: String
    var isSystem: Bool
    var createdAt: Date

    init(_ message: Message) {
        id = message.id ?? 0
        sender = message.sender
        text = message.text
        isSystem = message.isSystem
        createdAt = message.createdAt
    }
}

struct MessagePage: ResponseEncodable {
    var messages: [MessageBody]
    var next: Int64?
}

struct NotificationBody: Encodable {
    var id: Int64
    var groupId: String
    var kind: String
    var deepLink: String
    var createdAt: Date

    init(_ notification: GroupNotification) {
        id = notification.id ?? 0
        groupId = notification.groupId
        kind = notification.kind
        deepLink = notification.deepLink
        createdAt = notification.createdAt
    }
}

struct NotificationPage: ResponseEncodable {
    var notifications: [NotificationBody]
    var next: Int64?
}

struct GroupPage: ResponseEncodable {
    var groups: [GroupBody]
    var nextCursor: String?
}
