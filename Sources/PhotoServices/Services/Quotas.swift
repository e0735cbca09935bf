import Foundation
import PhotoPrep
import SQLKit

/// Users' storage quotas (`StorageQuota`): the server's setting, a user's own where one is set, and what each uses. A
/// photo is checked three times: when its upload is created (would it fit at its declared length, or its budget?),
/// before it is stored (does the prepared photo with its thumbnails fit?), and in the transaction that records it —
/// where the user's row is locked first (PostgreSQL; SQLite's writer lock does the same), so that uploads finishing at
/// once, on any instance, are counted one after the other and the last that does not fit is refused, its objects
/// deleted. A photo stored over one under the same key is not refused there (its old bytes are already overwritten):
/// usage can then exceed the quota by that photo's growth at most.
public struct Quotas: Sendable {
    let database: AppDatabase
    /// The quota of every user without one of their own (nil: quotas are off, users' own too; usage is still read).
    public let standard: StorageQuota?

    public init(database: AppDatabase, standard: StorageQuota? = .standard) {
        self.database = database
        self.standard = standard
    }

    /// What `user` uses, their own quota if they have one, and the quota that holds for them (theirs, else the server's;
    /// nil when quotas are off).
    public func account(of user: String) async throws(ServiceError) -> (usage: StorageUsage, own: StorageQuota?, quota: StorageQuota?) {
        try await database.read { db in
            let own = try await StorageUsage.ownQuota(of: user, db)
            return (try await StorageUsage.of(user, db), own, standard.map { own ?? $0 })
        }
    }

    /// Gives `user` a quota of their own (nil: the server's again).
    public func set(_ quota: StorageQuota?, for user: String) async throws(ServiceError) {
        _ = try StorageRules.validated(user, "user id")
        try await database.write { db in
            try await db.delete(from: "userQuota").where("userId", .equal, user).run()
            guard let quota else { return }
            try await db.insert(into: "userQuota").columns("userId", "bytes", "photos", "setAt")
                .values(SQLBind(user), SQLBind(quota.bytes), SQLBind(quota.photos), SQLBind(Date())).run()
        }
    }

    /// When an upload declaring `length` bytes is created: whether its photo fits in its owner's quota at `path`,
    /// counted as the smaller of the upload and its preset's byte budget (a photo that already complies is stored as it
    /// came; none is stored larger than its budget; its thumbnails are counted when the prepared photo is). Throws
    /// `.overQuota` when it does not: a 9 MB HEIC is refused with less than its budget left, though it might have
    /// stored smaller.
    public func checkRoom(for path: StoragePath, declaring length: Int64) async throws(ServiceError) {
        let largest = min(length, Int64(PrepareOptions(preset: path.preset).maxBytes))
        try await checkRoom(for: path, adding: largest) { owner, usage, after, quota, over in
            after.bytes <= quota.bytes
                ? "\(owner) stores \(usage.photos) photos in \(usage.bytes) bytes: the quota of \(over) is used up"
                : "\(owner) stores \(usage.photos) photos in \(usage.bytes) bytes; an upload of \(length) bytes may store up to \(largest) bytes: with it \(after.photos) photos in \(after.bytes) bytes, over the quota of \(over)"
        }
    }

    /// Before a prepared photo of `bytes` (with its thumbnails) is stored: whether it fits in its owner's quota at
    /// `path`; throws `.overQuota` when it does not.
    public func checkRoom(for path: StoragePath, adding bytes: Int64) async throws(ServiceError) {
        try await checkRoom(for: path, adding: bytes) { owner, usage, after, _, over in Self.refusal(owner, usage, after, over) }
    }

    /// Whether `adding` bytes and a photo fit in the quota of `path`'s owner, leaving out what the photo would replace
    /// (the same key, a previous profile picture); `refusal` says why not (owner, usage, usage with the photo, the
    /// quota, what of it is exceeded).
    private func checkRoom(
        for path: StoragePath, adding: Int64, refusal: @Sendable (String, StorageUsage, StorageUsage, StorageQuota, String) -> String
    ) async throws(ServiceError) {
        guard let owner = path.owner, let standard else { return }
        try await database.read { db in
            var replaced = [path.key]
            if case .profileImage = path, let old = try await Users.find(owner, db)?.profilePhotoKey { replaced.append(old) }
            let quota = try await StorageUsage.ownQuota(of: owner, db) ?? standard
            let usage = try await StorageUsage.of(owner, excluding: replaced, db)
            let after = StorageUsage(bytes: usage.bytes + adding, photos: usage.photos + 1)
            guard let over = quota.exceeded(by: after) else { return }
            throw ServiceError.overQuota(refusal(owner, usage, after, quota, over))
        }
    }

    /// In the transaction recording the photo at `path`, before anything of it is written: locks its owner's quota
    /// (PostgreSQL: their user row, which exists by then), and says whether the key held a photo already.
    static func lock(_ path: StoragePath, _ db: any SQLDatabase) async throws -> Bool {
        guard let owner = path.owner else { return false }
        if db.dialect.name != "sqlite" {
            _ = try await db.select().column("id").from("user").where("id", .equal, owner).for(.update).first()
        }
        return try await StoredPhotos.photo(path.key, db) != nil
    }

    /// In the same transaction, once the photo at `path` is recorded: throws `.overQuota` when its owner's usage is now
    /// over their quota, unless the photo replaced one under its key (`replacing`).
    static func check(_ path: StoragePath, replacing: Bool, standard: StorageQuota, _ db: any SQLDatabase) async throws {
        guard let owner = path.owner, !replacing else { return }
        let quota = try await StorageUsage.ownQuota(of: owner, db) ?? standard
        let after = try await StorageUsage.of(owner, db)
        guard let over = quota.exceeded(by: after) else { return }
        let before = try await StorageUsage.of(owner, excluding: [path.key], db)
        throw ServiceError.overQuota(refusal(owner, before, after, over))
    }

    /// What a client is told: the quota, the usage, and what the photo would have made it.
    static func refusal(_ owner: String, _ usage: StorageUsage, _ after: StorageUsage, _ over: String) -> String {
        "\(owner) stores \(usage.photos) photos in \(usage.bytes) bytes; with this one \(after.photos) photos in \(after.bytes) bytes, over the quota of \(over)"
    }
}
