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
        let photos = StoredPhotos(database: database)
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
}
