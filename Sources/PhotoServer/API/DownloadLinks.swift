import Hummingbird
import PhotoServices

/// The download URLs the API's photo objects carry (`MediaRoutes`): built when answering, on
/// `--public-url` or the request's host, from each stored photo's version and token.
struct DownloadLinks: Sendable {
    let photos: StoredPhotos
    let publicURL: String?

    /// The download URL of every stored photo among `keys`, by key.
    func urls(_ keys: [String?], _ request: Request) async throws -> [String: String] {
        let base = MediaRoutes.base(publicURL: publicURL, request)
        return try await photos.photos(keys.compactMap { $0 }).mapValues { MediaRoutes.downloadURL($0, base: base) }
    }

    func users(_ users: [User], _ request: Request) async throws -> [UserBody] {
        let urls = try await urls(users.map(\.profilePhotoKey), request)
        return users.map { user in
            var body = UserBody(user)
            body.profilePhotoDownloadURL = user.profilePhotoKey.flatMap { urls[$0] }
            return body
        }
    }

    func user(_ user: User, _ request: Request) async throws -> UserBody {
        try await users([user], request)[0]
    }

    func groups(_ groups: [(ChatGroup, [GroupMember])], _ request: Request) async throws -> [GroupBody] {
        let urls = try await urls(groups.map { StoragePath.groupPhoto(groupId: $0.0.id).key }, request)
        return groups.map { group, members in
            var body = GroupBody(group, members: members)
            body.photo.downloadURL = urls[StoragePath.groupPhoto(groupId: group.id).key]
            return body
        }
    }

    func group(_ group: ChatGroup, members: [GroupMember], _ request: Request) async throws -> GroupBody {
        try await groups([(group, members)], request)[0]
    }

    func album(_ photos: [AlbumPhoto], _ request: Request) async throws -> [AlbumPhotoBody] {
        let urls = try await urls(photos.map(\.key), request)
        return photos.map { photo in
            var body = AlbumPhotoBody(photo)
            body.downloadURL = urls[photo.key]
            return body
        }
    }
}
