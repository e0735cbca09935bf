import Foundation
import PhotoFiles
import SQLKit
import PhotoPrep
import PhotoUpload

/// Profile pictures and album photos: each user writes only their own folders.
public struct ProfileService: Sendable {
    let database: AppDatabase
    let jobs: PhotoJobs

    /// Sets or replaces the caller's profile picture (`profile` preset, `profile_images/{userId}/{id}.jpg`).
    /// The profile points at the new picture only once it is uploaded; the one it replaces is deleted
    /// afterwards. Returns the photo job.
    @discardableResult
    public func setProfilePhoto(caller: String, photo: PhotoInput) async throws(ServiceError) -> String {
        let id = randomUUID()
        let path = StoragePath.profileImage(userId: try StorageRules.validated(caller, "user id"), file: "\(id).jpg")
        return try await enqueue(kind: .profile, caller: caller, subject: caller, path: path, photo: photo)
    }

    /// Removes the caller's profile picture: the profile first, then the stored picture and its thumbnails.
    public func deleteProfilePhoto(caller: String) async throws(ServiceError) {
        let objects = try await database.write { db -> [String] in
            guard let user = try await Users.find(caller, db) else { throw ServiceError.unknownUsers([caller]) }
            try await db.update("user").set("profilePhotoKey", to: SQLLiteral.null).where("id", .equal, caller).run()
            guard let key = user.profilePhotoKey else { return [] }
            let forgotten = try await StoredPhotos.forget(key: key, db)
            try await Outbox.record(.profilePhotoChanged, subject: "user:\(caller)", data: ["userId": caller, "key": nil], db)
            if forgotten.photo != nil { try await Outbox.record(.photoDeleted, subject: "user:\(caller)", data: ["key": key, "owner": caller, "by": caller], db) }
            return forgotten.all
        }
        for url in objects { try await jobs.intake.delete(url, caller: caller) }
    }

    /// Adds a photo to one of the caller's albums (`photo` preset, `user_photos/{userId}/{album}/{photoId}.jpg`).
    public func addAlbumPhoto(caller: String, album: String, photo: PhotoInput) async throws(ServiceError) -> (photo: AlbumPhoto, job: String) {
        let photoId = randomUUID()
        let path = StoragePath.userPhoto(
            userId: try StorageRules.validated(caller, "user id"), album: try StorageRules.validated(album, "album"), file: "\(photoId).jpg")
        let record = AlbumPhoto(id: photoId, userId: caller, album: album, key: path.key, state: .pending, createdAt: Date())
        let job = try await enqueue(kind: .album, caller: caller, subject: photoId, path: path, photo: photo) { db in
            try await db.insert(into: "albumPhoto").model(record).run()
        }
        return (record, job)
    }

    /// The caller's photos in an album, oldest first: by when each was taken (`StoredPhoto.takenAtUTC`), or, for one
    /// whose photo did not say (or is not stored yet), when it was added.
    public func albumPhotos(caller: String, album: String) async throws(ServiceError) -> [AlbumPhoto] {
        try await database.read { db in
            try await Users.require([caller], db)
            return try await db.raw(
                """
                SELECT a.* FROM "albumPhoto" a LEFT JOIN "storedPhoto" s ON s."key" = a."key"
                WHERE a."userId" = \(bind: caller) AND a."album" = \(bind: album)
                ORDER BY COALESCE(s."takenAtUTC", a."createdAt"), a."createdAt", a."id"
                """
            ).all(decoding: AlbumPhoto.self)
        }
    }

    /// Deletes one of the caller's album photos: its upload stops, the record and the stored object go.
    public func deleteAlbumPhoto(caller: String, photoId: String) async throws(ServiceError) {
        let photo = try await database.read { db -> AlbumPhoto in
            try await Users.require([caller], db)
            guard let photo = try await db.select().columns("*").from("albumPhoto").where("id", .equal, photoId).first(decoding: AlbumPhoto.self)
            else { throw ServiceError.notFound("album photo \(photoId)") }
            guard photo.userId == caller else { throw ServiceError.notAllowed("\(caller) may not delete \(photo.key)") }
            return photo
        }
        if let job = try await jobs.store.albumJob(photo: photoId) { try await jobs.cancel(job) }
        let objects = try await database.write { db in
            try await db.delete(from: "albumPhoto").where("id", .equal, photoId).run()
            try await JobStore.deleteAlbumJobs(photo: photoId, db)
            let forgotten = try await StoredPhotos.forget(key: photo.key, db)
            let subject = "user:\(caller)"
            try await Outbox.record(
                .albumPhotoDeleted, subject: subject, data: ["userId": caller, "album": photo.album, "photoId": photoId, "key": photo.key], db)
            if forgotten.photo != nil { try await Outbox.record(.photoDeleted, subject: subject, data: ["key": photo.key, "owner": caller, "by": caller], db) }
            return forgotten.all
        }
        for url in objects { try await jobs.intake.delete(url, caller: caller) }
    }

    private func enqueue(
        kind: PhotoJob.Kind, caller: String, subject: String, path: StoragePath, photo: PhotoInput,
        also: @escaping @Sendable (any SQLDatabase) async throws -> Void = { _ in }
    ) async throws(ServiceError) -> String {
        try await database.read { db in try await Users.require([caller], db) }
        try StorageRules.authorize(caller: caller, writing: path) { _ in false }
        return try await jobs.submit(kind: kind, caller: caller, subject: subject, path: path, photo: photo, also: also)
    }
}
