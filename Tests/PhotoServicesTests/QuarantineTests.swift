import Foundation
import SQLKit
@testable import PhotoServices
import Testing
import TestSupport

/// Photos the app's review quarantined (`StoredPhoto.quarantine`): recorded with who uploaded them, listed, released by
/// an admin with its event. On SQLite, and on PostgreSQL with `PHOTOPREP_TEST_DATABASE=postgres`.
@Suite struct QuarantineTests {
    @Test func aQuarantinedPhotoIsRecordedListedAndReleasedOnce() async throws {
        let harness = try await Harness()
        let database = harness.services.database
        let photos = harness.services.moderation
        var held = QuotaTests.objects("user_photos/u1/trip/1.jpg")
        held.quarantine = "needs a second look"
        try await database.write { [held] db in
            _ = try await PhotoIntake.record(caller: "u1", displayName: nil, path: try StoragePath(key: "user_photos/u1/trip/1.jpg"), stored: held, db)
            _ = try await PhotoIntake.record(
                caller: "u1", displayName: nil, path: try StoragePath(key: "user_photos/u1/trip/2.jpg"), stored: QuotaTests.objects("2"), db)
        }
        let listed = try await photos.quarantined()
        #expect(listed.map(\.key) == ["user_photos/u1/trip/1.jpg"] && listed[0].quarantine == "needs a second look" && listed[0].uploadedBy == "u1")
        let released = try await photos.release("user_photos/u1/trip/1.jpg", by: "admin1")
        #expect(released.quarantine == nil && released.uploadedBy == "u1")
        #expect(try await photos.quarantined().isEmpty)
        await #expect(throws: ServiceError.self) { _ = try await photos.release("user_photos/u1/trip/1.jpg", by: "admin1") }
        await #expect(throws: ServiceError.self) { _ = try await photos.release("user_photos/u1/trip/9.jpg", by: "admin1") }
        let events = try await OutboxTests.events(database)
        #expect(events.map(\.type) == ["photo.stored", "album.photoAdded", "photo.stored", "album.photoAdded", "photo.released"], "\(events.map(\.type))")
        #expect(try OutboxTests.data(events[0])["quarantine"] as? String == "needs a second look")
        #expect(try OutboxTests.data(events[2])["quarantine"] is NSNull)
        let release = try OutboxTests.data(events[4])
        #expect(release["key"] as? String == "user_photos/u1/trip/1.jpg" && release["by"] as? String == "admin1" && release["uploadedBy"] as? String == "u1")
    }

    /// Rejected after all: the photo is deleted as its owner would delete it — the album photo gone, its objects gone —
    /// with `album.photoDeleted` and `photo.deleted` (the admin, the reason); a photo not quarantined is not the admins' to delete.
    @Test func aQuarantinedPhotoRejectedAfterAllIsDeletedWithItsRecords() async throws {
        let harness = try await Harness()
        let key = "user_photos/u1/trip/1.jpg"
        let file = harness.folder.appendingPathComponent("storage/\(key)")
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data([1, 2, 3]).write(to: file)
        var held = StoredPhotos.StoredObjects(photo: .init(location: file.absoluteString, content: .init(of: [1, 2, 3])), thumbnails: [], score: nil)
        held.quarantine = "needs a second look"
        try await harness.services.database.write { [held] db in
            _ = try await PhotoIntake.record(caller: "u1", displayName: nil, path: try StoragePath(key: key), stored: held, db)
            _ = try await PhotoIntake.record(
                caller: "u1", displayName: nil, path: try StoragePath(key: "user_photos/u1/trip/2.jpg"), stored: QuotaTests.objects("2"), db)
        }
        await #expect(throws: ServiceError.self) { _ = try await harness.services.moderation.reject("user_photos/u1/trip/2.jpg", by: "admin1", reason: "no") }
        let rejected = try await harness.services.moderation.reject(key, by: "admin1", reason: "not allowed here")
        #expect(rejected.key == key && rejected.uploadedBy == "u1")
        #expect(!FileManager.default.fileExists(atPath: file.path), "its object deleted")
        #expect(try await harness.services.profiles.albumPhotos(caller: "u1", album: "trip").map(\.key) == ["user_photos/u1/trip/2.jpg"])
        #expect(try await harness.services.photos.photos([key]).isEmpty)
        let events = try await OutboxTests.events(harness.services.database)
        #expect(events.suffix(2).map(\.type) == ["album.photoDeleted", "photo.deleted"], "\(events.map(\.type))")
        let deleted = try OutboxTests.data(events[events.count - 1])
        #expect(deleted["by"] as? String == "admin1" && deleted["reason"] as? String == "not allowed here" && deleted["uploadedBy"] as? String == "u1")
    }
}
