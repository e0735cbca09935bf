/// What happened, as an event's `type` names it: after what the services record, one name for each change.
public enum EventType: String, Codable, Sendable, CaseIterable {
    /// A photo stored under a key that held none (`data`: key, owner, size, sha256, score, by).
    case photoStored = "photo.stored"
    /// A photo stored over the one its key held (the same `data`).
    case photoReplaced = "photo.replaced"
    /// A photo the app's review quarantined, released by an admin (`data`: key, owner, uploadedBy, by).
    case photoReleased = "photo.released"
    /// A stored photo deleted, with its thumbnails (`data`: key, owner, by).
    case photoDeleted = "photo.deleted"
    /// A group created (`data`: groupId, name, createdBy, members).
    case groupCreated = "group.created"
    /// A group renamed by one of its admins (`data`: groupId, name, by).
    case groupRenamed = "group.renamed"
    /// Members added to or removed from a group (`data`: groupId, added, removed, members, by).
    case groupMembersChanged = "group.membersChanged"
    /// A group's photo stored (`data`: groupId, key, by).
    case groupPhotoChanged = "group.photoChanged"
    /// A user's display name changed (`data`: userId, displayName).
    case userRenamed = "user.renamed"
    /// A user's profile picture set or removed (`data`: userId, key: nil when removed).
    case profilePhotoChanged = "user.profilePhotoChanged"
    /// A photo added to one of a user's albums (`data`: userId, album, photoId, key).
    case albumPhotoAdded = "album.photoAdded"
    /// A photo taken out of an album (`data`: userId, album, photoId, key).
    case albumPhotoDeleted = "album.photoDeleted"
}
