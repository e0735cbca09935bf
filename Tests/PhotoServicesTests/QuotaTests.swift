import Foundation
import SQLKit
@testable import PhotoServices
import Testing
import TestSupport

/// Storage quotas where a photo is recorded (`PhotoIntake.record`), on SQLite and on PostgreSQL.
@Suite struct QuotaTests {
    static func objects(_ name: String, size: Int = 3) -> StoredPhotos.StoredObjects {
        StoredPhotos.StoredObjects(
            photo: .init(location: "file:///nowhere/\(name)", content: .init(of: [UInt8](repeating: 7, count: size))), thumbnails: [], score: nil)
    }

    static func record(_ key: String, quota: StorageQuota, _ db: any SQLDatabase) async throws {
        _ = try await PhotoIntake.record(caller: "u1", displayName: nil, path: try StoragePath(key: key), stored: objects(key), quota: quota, db)
    }

    /// Two photos of one user recorded at once, the first's transaction still open while the second records: the
    /// second waits for it (PostgreSQL: the owner's row is locked; SQLite: the writer lock), counts its photo and is
    /// refused — one photo recorded with a quota of one. (With the lock left out, PostgreSQL recorded both.)
    @Test func recordsOfOneUserAtOnceAreCountedOneAfterTheOther() async throws {
        let harness = try await Harness()
        let database = harness.services.database
        let quota = StorageQuota(bytes: 1 << 30, photos: 1)
        let opened = AsyncStream<Void>.makeStream()
        async let first: Void = database.write { db in
            try await Self.record("user_photos/u1/a/1.jpg", quota: quota, db)
            opened.continuation.yield()
            try await Task.sleep(for: .seconds(1))  // still open while the second records
        }
        for await _ in opened.stream { break }
        var refusal: ServiceError?
        do {
            try await database.write { db in try await Self.record("user_photos/u1/a/2.jpg", quota: quota, db) }
        } catch {
            refusal = error
        }
        try await first
        guard case .overQuota(let detail)? = refusal else {
            Issue.record("the second photo was \(refusal.map { "refused: \($0)" } ?? "recorded")")
            return
        }
        #expect(detail.contains("u1 stores 1 photos in 3 bytes") && detail.contains("over the quota of 1 photos"), "\(detail)")
        let keys = try await database.read { db in try await db.select().column("key").from("storedPhoto").all(decodingColumn: "key", as: String.self) }
        #expect(keys.filter { $0.hasPrefix("user_photos/u1/") } == ["user_photos/u1/a/1.jpg"])
    }

    /// What counts: the user's photos with their thumbnails (and WebPs), under both their folders; not another user's,
    /// not a group's; a user id with `_` (a LIKE wildcard) counts only its own.
    @Test func usageCountsTheUsersOwnFoldersOnly() async throws {
        let harness = try await Harness()
        let database = harness.services.database
        try await database.write { db in
            for (key, size) in [("profile_images/u1/me.jpg", 100), ("user_photos/u1/a/1.jpg", 1000), ("user_photos/u11/a/1.jpg", 5), ("user_photos/u_1/a/1.jpg", 7)] {
                var stored = Self.objects(key, size: size)
                stored.thumbnails = [(edge: 128, width: 128, height: 96, object: .init(location: "file:///t/\(key)", content: .init(of: [1, 2])), webp: nil)]
                _ = try await StoredPhotos.record(key: key, stored: stored, by: "u1", at: Date(), db)
            }
        }
        let account = try await Quotas(database: database).account(of: "u1")
        #expect(account.usage == StorageUsage(bytes: 100 + 2 + 1000 + 2, photos: 2))
        #expect(try await Quotas(database: database).account(of: "u_1").usage == StorageUsage(bytes: 7 + 2, photos: 1))
        #expect(account.own == nil && account.quota == .standard)
    }
}
