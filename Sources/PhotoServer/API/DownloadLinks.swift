import Hummingbird
import PhotoServices

/// The download URLs the API's photo objects carry (`MediaRoutes`): built when answering, on
/// `--public-url` or the request's host, from each stored photo's version and token — for whoever asks: a photo the
/// app's review quarantined has links only for its uploader and the server's admins (`--admin`); anyone else is told
/// it is quarantined, and no more.
struct DownloadLinks: Sendable {
    let photos: StoredPhotos
    let address: PublicAddress
    let admins: Set<String>

    /// A stored photo's download URL and its thumbnails', its placeholder and capture time.
    struct Links {
        var photo: String
        var thumbnails: [ThumbnailBody]
        var placeholder: String?
        var takenAt: String?
        var focus: String?
        /// Why the review quarantined it (nil: it did not).
        var quarantine: String?
        /// Quarantined, and not the viewer's to see: nothing else is set.
        var hidden = false
    }

    /// The links of every stored photo among `keys` that `viewer` may see, by key.
    func links(_ keys: [String?], for viewer: String, _ request: Request) async throws -> [String: Links] {
        let base = address.base(request.head)
        let keys = keys.compactMap { $0 }
        let stored = try await photos.photos(keys)
        let thumbnails = try await photos.thumbnails(Array(stored.keys))
        return stored.mapValues { photo in
            if let reason = photo.quarantine, photo.uploadedBy != viewer, !admins.contains(viewer) {
                return Links(photo: "", thumbnails: [], quarantine: reason, hidden: true)
            }
            return Links(
                photo: MediaRoutes.downloadURL(photo, base: base),
                thumbnails: (thumbnails[photo.key] ?? []).map {
                    ThumbnailBody(
                        edge: $0.edge, width: $0.width, height: $0.height, downloadURL: MediaRoutes.downloadURL(photo, base: base, edge: $0.edge),
                        webpDownloadURL: $0.webpLocation == nil ? nil : MediaRoutes.downloadURL(photo, base: base, edge: $0.edge, format: .webp))
                }, placeholder: photo.placeholder, takenAt: photo.takenAt, focus: photo.focus, quarantine: photo.quarantine)
        }
    }

    /// A photo body with the links of the photo at `key`, if stored.
    func photo(_ body: PhotoBody, key: String, for viewer: String, _ request: Request) async throws -> PhotoBody {
        var body = body
        if let links = try await links([key], for: viewer, request)[key] { body.link(links) }
        return body
    }

    func users(_ users: [User], for viewer: String, _ request: Request) async throws -> [UserBody] {
        let links = try await links(users.map(\.profilePhotoKey), for: viewer, request)
        return users.map { user in
            var body = UserBody(user)
            // Another's picture under review is not theirs to see: as if there were none.
            guard let photo = user.profilePhotoKey.flatMap({ links[$0] }), !photo.hidden else { return body }
            body.profilePhotoURL = photo.photo
            body.profilePhotoDownloadURL = photo.photo
            body.profilePhotoThumbnails = photo.thumbnails
            body.profilePhotoPlaceholder = photo.placeholder
            body.profilePhotoQuarantine = photo.quarantine
            return body
        }
    }

    func user(_ user: User, for viewer: String, _ request: Request) async throws -> UserBody {
        try await users([user], for: viewer, request)[0]
    }

    func groups(_ groups: [(ChatGroup, [GroupMember])], for viewer: String, _ request: Request) async throws -> [GroupBody] {
        let links = try await links(groups.map { StoragePath.groupPhoto(groupId: $0.0.id).key }, for: viewer, request)
        return groups.map { group, members in
            var body = GroupBody(group, members: members)
            if let photo = links[StoragePath.groupPhoto(groupId: group.id).key] { body.photo.link(photo) }
            return body
        }
    }

    func group(_ group: ChatGroup, members: [GroupMember], for viewer: String, _ request: Request) async throws -> GroupBody {
        try await groups([(group, members)], for: viewer, request)[0]
    }

    func album(_ photos: [AlbumPhoto], for viewer: String, _ request: Request) async throws -> [AlbumPhotoBody] {
        let links = try await links(photos.map(\.key), for: viewer, request)
        return photos.map { photo in
            var body = AlbumPhotoBody(photo)
            if let links = links[photo.key] { body.link(links) }
            return body
        }
    }
}

extension PhotoBody {
    /// The stored photo's links, placeholder, capture time and focal point; quarantined: said so, and for a viewer who may
    /// not see it, nothing more.
    mutating func link(_ links: DownloadLinks.Links) {
        if links.quarantine != nil, state == "ready" { state = "quarantined" }
        guard !links.hidden else { return }
        (url, downloadURL, thumbnails) = (links.photo, links.photo, links.thumbnails)
        (placeholder, takenAt, focus, quarantine) = (links.placeholder, links.takenAt, links.focus, links.quarantine)
    }
}

extension AlbumPhotoBody {
    /// The stored photo's links, placeholder and capture time (an album is its owner's, who uploaded it: never hidden).
    mutating func link(_ links: DownloadLinks.Links) {
        if links.quarantine != nil, state == "ready" { state = "quarantined" }
        guard !links.hidden else { return }
        (url, downloadURL, thumbnails) = (links.photo, links.photo, links.thumbnails)
        (placeholder, takenAt, quarantine) = (links.placeholder, links.takenAt, links.quarantine)
    }
}
