import Foundation
import GRDB
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
    public func setProfilePhoto(caller: String, photo: PhotoInput) throws(ServiceError) -> String {
        let id = UUID().uuidString.lowercased()
        let path = StoragePath.profileImage(userId: try StorageRules.validated(caller, "user id"), file: "\(id).jpg")
        return try enqueue(kind: .profile, caller: caller, subject: caller, path: path, preset: .profile, photo: photo)
    }

    /// Removes the caller's profile picture: the profile first, then the stored picture.
    public func deleteProfilePhoto(caller: String) async throws(ServiceError) {
        let url = try database.write { db -> String? in
            try db.requireUsers([caller])
            let url = try String.fetchOne(db, sql: "SELECT profilePhotoURL FROM user WHERE id = ?", arguments: [caller])
            try db.execute(sql: "UPDATE user SET profilePhotoURL = NULL, profilePhotoKey = NULL WHERE id = ?", arguments: [caller])
            return url
        }
        if let url { try await deleteObject(url, caller: caller) }
    }

    /// Adds a photo to one of the caller's albums (`photo` preset, `user_photos/{userId}/{album}/{photoId}.jpg`).
    public func addAlbumPhoto(caller: String, album: String, photo: PhotoInput) throws(ServiceError) -> (photo: AlbumPhoto, job: String) {
        let photoId = UUID().uuidString.lowercased()
        let path = StoragePath.userPhoto(
            userId: try StorageRules.validated(caller, "user id"), album: try StorageRules.validated(album, "album"), file: "\(photoId).jpg")
        let record = AlbumPhoto(id: photoId, userId: caller, album: album, key: path.key, url: nil, state: .pending, createdAt: Date())
        let job = try enqueue(kind: .album, caller: caller, subject: photoId, path: path, preset: .photo, photo: photo) { db in
            try record.insert(db)
        }
        return (record, job)
    }

    /// The caller's photos in an album, oldest first (with their upload state).
    public func albumPhotos(caller: String, album: String) throws(ServiceError) -> [AlbumPhoto] {
        try database.read { db in
            try db.requireUsers([caller])
            return try AlbumPhoto.filter(sql: "userId = ? AND album = ?", arguments: [caller, album]).order(sql: "createdAt, id").fetchAll(db)
        }
    }

    /// Deletes one of the caller's album photos: its upload stops, the record and the stored object go.
    public func deleteAlbumPhoto(caller: String, photoId: String) async throws(ServiceError) {
        let photo = try database.read { db -> AlbumPhoto in
            try db.requireUsers([caller])
            guard let photo = try AlbumPhoto.fetchOne(db, key: photoId) else { throw ServiceError.notFound("album photo \(photoId)") }
            guard photo.userId == caller else { throw ServiceError.notAllowed("\(caller) may not delete \(photo.key)") }
            return photo
        }
        let job = try database.read { db in
            try String.fetchOne(db, sql: "SELECT id FROM photoJob WHERE kind = 'album' AND subject = ?", arguments: [photoId])
        }
        if let job { try await jobs.cancel(job) }
        try database.write { db in
            _ = try AlbumPhoto.deleteOne(db, key: photoId)
            try db.execute(sql: "DELETE FROM photoJob WHERE kind = 'album' AND subject = ?", arguments: [photoId])
        }
        if let url = photo.url { try await deleteObject(url, caller: caller) }
    }

    private func enqueue(
        kind: PhotoJob.Kind, caller: String, subject: String, path: StoragePath, preset: PrepareOptions.Preset, photo: PhotoInput,
        also: (Database) throws -> Void = { _ in }
    ) throws(ServiceError) -> String {
        try database.read { db in try db.requireUsers([caller]) }
        try StorageRules.authorize(caller: caller, writing: path) { _ in false }
        return try jobs.submit(kind: kind, caller: caller, subject: subject, path: path, preset: preset, photo: photo, also: also)
    }

    private func deleteObject(_ url: String, caller: String) async throws(ServiceError) {
        do {
            try await jobs.uploader.delete(url, authorization: jobs.credentials(caller))
        } catch {
            throw .storage("deleting \(url): \(error)")
        }
    }
}
