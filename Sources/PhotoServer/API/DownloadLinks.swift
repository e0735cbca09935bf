import Hummingbird
import PhotoServices

/// The download URLs the API's photo objects carry (`MediaRoutes`): built when answering, on
/// `--public-url` or the request's host, from each stored photo's version and token.
struct DownloadLinks: Sendable {
    let photos: StoredPhotos
    let address: PublicAddress

    /// A stored photo's download URL and its thumbnails', its placeholder and capture time.
    struct Links {
        var photo: String
        var thumbnails: [ThumbnailBody]
        var placeholder: String?
        var takenAt: String?
        var focus: String?
    }

    /// The links of every stored photo among `keys`, by key.
    func links(_ keys: [String?], _ request: Request) async throws -> [String: Links] {
        let base = address.base(request.head)
        let keys = keys.compactMap { $0 }
        let stored = try await photos.photos(keys)
        let thumbnails = try await photos.thumbnails(Array(stored.keys))
        return stored.mapValues { photo in
            Links(
                photo: MediaRoutes.downloadURL(photo, base: base),
                thumbnails: (thumbnails[photo.key] ?? []).map {
                    ThumbnailBody(
                        edge: $0.edge, width: $0.width, height: $0.height, downloadURL: MediaRoutes.downloadURL(photo, base: base, edge: $0.edge),
                        webpDownloadURL: $0.webpLocation == nil ? nil : MediaRoutes.downloadURL(photo, base: base, edge: $0.edge, format: .webp))
                }, placeholder: photo.placeholder, takenAt: photo.takenAt, focus: photo.focus)
        }
    }

    /// A photo body with the links of the photo at `key`, if stored.
    func photo(_ body: PhotoBody, key: String, _ request: Request) async throws -> PhotoBody {
        var body = body
        if let links = try await links([key], request)[key] { body.link(links) }
        return body
    }

    func users(_ users: [User], _ request: Request) async throws -> [UserBody] {
        let links = try await links(users.map(\.profilePhotoKey), request)
        return users.map { user in
            var body = UserBody(user)
            let photo = user.profilePhotoKey.flatMap { links[$0] }
            body.profilePhotoURL = photo?.photo
            body.profilePhotoDownloadURL = photo?.photo
            body.profilePhotoThumbnails = photo?.thumbnails
            body.profilePhotoPlaceholder = photo?.placeholder
            return body
        }
    }

    func user(_ user: User, _ request: Request) async throws -> UserBody {
        try await users([user], request)[0]
    }

    func groups(_ groups: [(ChatGroup, [GroupMember])], _ request: Request) async throws -> [GroupBody] {
        let links = try await links(groups.map { StoragePath.groupPhoto(groupId: $0.0.id).key }, request)
        return groups.map { group, members in
            var body = GroupBody(group, members: members)
            if let photo = links[StoragePath.groupPhoto(groupId: group.id).key] { body.photo.link(photo) }
            return body
        }
    }

    func group(_ group: ChatGroup, members: [GroupMember], _ request: Request) async throws -> GroupBody {
        try await groups([(group, members)], request)[0]
    }

    func album(_ photos: [AlbumPhoto], _ request: Request) async throws -> [AlbumPhotoBody] {
        let links = try await links(photos.map(\.key), request)
        return photos.map { photo in
            var body = AlbumPhotoBody(photo)
            if let links = links[photo.key] { body.link(links) }
            return body
        }
    }
}

extension PhotoBody {
    /// The stored photo's links, placeholder, capture time and focal point.
    mutating func link(_ links: DownloadLinks.Links) {
        (url, downloadURL, thumbnails) = (links.photo, links.photo, links.thumbnails)
        (placeholder, takenAt, focus) = (links.placeholder, links.takenAt, links.focus)
    }
}

extension AlbumPhotoBody {
    /// The stored photo's links, placeholder and capture time.
    mutating func link(_ links: DownloadLinks.Links) {
        (url, downloadURL, thumbnails) = (links.photo, links.photo, links.thumbnails)
        (placeholder, takenAt) = (links.placeholder, links.takenAt)
    }
}
