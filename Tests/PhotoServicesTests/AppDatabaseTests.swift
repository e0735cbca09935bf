import Foundation
import GRDB
@testable import PhotoServices
import Testing
import TestSupport

@Suite struct AppDatabaseTests {
    /// A file written by the first schema version opens with the current one, its rows kept.
    @Test func aVersion1FileIsMigratedWithItsData() throws {
        let path = try temporaryFolder().appendingPathComponent("app.sqlite").path
        let old = try DatabaseQueue(path: path)
        try AppDatabase.migrator.migrate(old, upTo: "v1")
        try old.write { db in
            try db.execute(sql: "INSERT INTO user (id, displayName, createdAt) VALUES ('u1', 'Ana', '2026-01-01 00:00:00')")
            try db.execute(sql: """
                INSERT INTO photoJob (id, kind, caller, subject, key, preset, originalPath, state, attempts, createdAt, updatedAt)
                VALUES ('j1', 'profile', 'u1', 'u1', 'profile_images/u1/a.jpg', 'profile', '/tmp/a', 'pending', 0, '2026-01-01', '2026-01-01')
                """)
        }
        try old.close()

        let database = try AppDatabase(path: path)
        let (migrations, job, user) = try database.writer.read { db in
            (try AppDatabase.migrator.appliedMigrations(db), try PhotoJob.fetchOne(db, key: "j1"), try User.fetchOne(db, key: "u1"))
        }
        #expect(migrations == ["v1", "v2: upload resume state", "v3: offline-first client", "v4: stale objects"])
        #expect(user?.displayName == "Ana")
        #expect(job?.state == .pending && job?.uploadedBytes == 0 && job?.uploadLocation == nil && job?.waitsFor == nil)
        #expect(try database.read { db in try PendingGroup.fetchCount(db) + StaleObject.fetchCount(db) } == 0)
    }
}
