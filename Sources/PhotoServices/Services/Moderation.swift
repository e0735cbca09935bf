public import Foundation
import SQLKit

/// What the server's admins do with the photos the app's review quarantined (`ReviewVerdict.quarantine`): list them,
/// release one (its links go to everyone who may see it), or reject one after all (it is deleted as its owner would
/// delete it). Each decision is recorded with its event, in its transaction.
public struct Moderation: Sendable {
    let database: AppDatabase
    let intake: PhotoIntake

    public init(database: AppDatabase, intake: PhotoIntake) {
        self.database = database
        self.intake = intake
    }

    /// The quarantined photos, the newest first (at most `limit`).
    public func quarantined(limit: Int = 100) async throws(ServiceError) -> [StoredPhoto] {
        try await database.read { db in
            try await db.select().columns("*").from("storedPhoto").where("quarantine", .isNot, SQLLiteral.null)
                .orderBy("storedAt", .descending).limit(limit).all(decoding: StoredPhoto.self)
        }
    }

    /// Releases the quarantined photo at `key` (`admin` looked at it): `photo.released`. `notFound` when no photo is
    /// stored there; `invalidState` when it is not quarantined.
    public func release(_ key: String, by admin: String) async throws(ServiceError) -> StoredPhoto {
        try await database.write { db in
            var (photo, path) = try await Self.quarantined(key, db)
            photo.quarantine = nil
            try await db.update("storedPhoto").set("quarantine", to: SQLLiteral.null).where("key", .equal, key).run()
            try await Outbox.record(
                .photoReleased, subject: Outbox.subject(of: path), data: ["key": key, "owner": path.owner, "uploadedBy": photo.uploadedBy, "by": admin], db)
            return photo
        }
    }

    /// Deletes the quarantined photo at `key` (`admin` looked at it and said no, for `reason`): its record, what refers to
    /// it (the group's photo, the profile picture, the album photo) and its objects, as its owner deleting it would;
    /// `photo.deleted` with the admin and the reason. Returns the photo as it was.
    public func reject(_ key: String, by admin: String, reason: String) async throws(ServiceError) -> StoredPhoto {
        let (photo, objects) = try await database.write { db in
            let (photo, path) = try await Self.quarantined(key, db)
            let objects = try await StoredPhotos.forget(key: key, db).all
            let subject = Outbox.subject(of: path)
            switch path {
            case .groupPhoto(let group):
                try await db.update("chatGroup").set("photoState", to: PhotoState.none.rawValue).set("updatedAt", to: Date()).where("id", .equal, group).run()
            case .profileImage(let user, _):
                let cleared = try await db.update("user").set("profilePhotoKey", to: SQLLiteral.null).where("id", .equal, user)
                    .where("profilePhotoKey", .equal, key).returning("id").all()
                if !cleared.isEmpty { try await Outbox.record(.profilePhotoChanged, subject: subject, data: ["userId": user, "key": nil], db) }
            case .userPhoto(let user, let album, _):
                let removed = try await db.delete(from: "albumPhoto").where("key", .equal, key).returning("id").all(decodingColumn: "id", as: String.self)
                for id in removed {
                    try await JobStore.deleteAlbumJobs(photo: id, db)
                    try await Outbox.record(.albumPhotoDeleted, subject: subject, data: ["userId": user, "album": album, "photoId": id, "key": key], db)
                }
            }
            try await Outbox.record(
                .photoDeleted, subject: subject, data: ["key": key, "owner": path.owner, "uploadedBy": photo.uploadedBy, "by": admin, "reason": reason], db)
            return (photo, objects)
        }
        for object in objects { await intake.deleteReplaced(object, caller: photo.uploadedBy ?? admin) }
        return photo
    }

    private static func quarantined(_ key: String, _ db: any SQLDatabase) async throws -> (StoredPhoto, StoragePath) {
        guard let photo = try await StoredPhotos.photo(key, db) else { throw ServiceError.notFound("photo \(key)") }
        guard photo.quarantine != nil else { throw ServiceError.invalidState("the photo at \(key) is not quarantined") }
        return (photo, try StoragePath(key: key))
    }
}
