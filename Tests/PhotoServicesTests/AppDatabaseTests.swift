import Foundation
import SQLKit
@testable import PhotoServices
import Testing
import TestSupport

@Suite struct AppDatabaseTests {
    /// The schema's migrations run once: a database opened again (another process, another instance)
    /// keeps its rows and records each of its role's migrations once.
    @Test func migrationsRunOnceAndRowsSurviveReopening() async throws {
        let folder = try temporaryFolder()
        let first = try await Harness.database(in: folder)
        try await first.write { db in
            try await db.insert(into: "user").model(User(id: "u1", displayName: "Ana")).run()
        }
        await first.close()

        let again = try await Harness.database(in: folder)
        #expect(try await Self.migrations(again).sorted() == (Schema.services + Schema.jobs).map(\.name).sorted())
        #expect(try await again.one(User.self, from: "user", id: "u1")?.displayName == "Ana")
    }

    /// Each role's database has its own tables and no others: the client's no users or groups (its
    /// server records those), the embedded services' and the server's no pending groups.
    @Test func eachRoleGetsItsOwnTables() async throws {
        let jobs: Set = ["photoJob", "photoJobRun", "staleObject"]
        let services: Set = ["user", "chatGroup", "groupMember", "message", "notification", "albumPhoto", "storedPhoto", "storedThumbnail", "groupCreation", "userQuota", "event"]
        let expected: [(AppDatabase.Role, Set<String>)] = [
            (.services, services.union(jobs)),
            (.client, jobs.union(["pendingGroup"])),
            (.server, services.union(jobs)),  // and the server's own upload tables, which it adds (`UploadSchema`)
        ]
        for (role, tables) in expected {
            let database = try await Harness.database(in: try temporaryFolder(), role: role)
            #expect(try await Self.tables(database) == tables.union(["schemaMigration"]), "\(role)")
            await database.close()
        }
    }

    /// A database migrated when every database got every table (migrations v1–v5) opens in any role
    /// without running those again (their tables are there already); only what was added since runs.
    @Test func aDatabaseFromBeforeTheRolesOpensInEveryRole() async throws {
        let shipped = [
            "v1: users, groups, messages, notifications, album photos, photo jobs", "v2: offline-first client", "v3: stale objects",
            "v4: photo job runs", "v5: shared partial uploads",
        ]
        let folder = try temporaryFolder()
        // Every table, as the five migrations that shipped made them, recorded under their names.
        _ = try await Harness.database(in: folder, role: .server)
        let everything = try await Harness.database(in: folder, role: .client)
        try await everything.write { db in
            try await db.delete(from: "schemaMigration").run()
            try await db.drop(table: "groupCreation").run()  // added since
            try await db.drop(table: "userQuota").run()  // added since
            try await db.drop(table: "event").run()  // added since
            try await db.drop(table: "storedThumbnail").run()
            try await db.drop(table: "storedPhoto").run()
            try await db.raw("ALTER TABLE \"photoJob\" DROP COLUMN \"destination\"").run()  // added since
            try await db.raw("ALTER TABLE \"photoJob\" DROP COLUMN \"focus\"").run()  // added since
            for (table, column) in [("chatGroup", "photoURL"), ("user", "profilePhotoURL"), ("albumPhoto", "url")] {
                try await db.raw("ALTER TABLE \(ident: table) ADD COLUMN \(ident: column) TEXT").run()  // dropped since
            }
            for name in shipped {
                try await db.insert(into: "schemaMigration").columns("name", "appliedAt").values(SQLBind(name), SQLBind(Date())).run()
            }
        }
        await everything.close()
        // Written out, not read from the schema: a migration wrongly marked as shipped would be skipped here.
        let addedSince = [
            "services v2: stored photos' versions and download tokens", "services v3: each group's creation, to tell a resent creation from another",
            "services v4: each stored photo's perceptual quality score",
            "services v5: each stored photo's placeholder, capture time and focal point, its thumbnails' WebPs",
            "services v6: a stored photo's location recorded once, in its stored photo's row",
            "services v7: storage quotas: each stored photo's owner, users' own quotas", "services v8: the events' outbox",
            "services v9: who uploaded each stored photo, and the photos the app's review quarantined",
            "jobs v5: each job's destination", "jobs v6: each job's focal point",
        ]
        for role in [AppDatabase.Role.services, .client, .server] {
            let reopened = try await Harness.database(in: folder, role: role)
            #expect(Set(try await Self.migrations(reopened)) == Set(shipped + addedSince), "\(role): nothing that shipped ran again")
            #expect(try await Self.tables(reopened).isSuperset(of: ["storedPhoto", "storedThumbnail", "groupCreation"]), "\(role): what was added since is there")
            await reopened.close()
        }
    }

    /// A database as the release before one recorded location made it (services v1–v5): a group photo, a profile
    /// picture and an album photo each with its location in its own row and in its stored photo's (as every photo
    /// since stored photos had rows), and an album photo recorded before that (its location in its own row alone).
    /// Opened now (services v6), every photo is where it was: each one's location is its stored photo's, the old one
    /// got a row (no version: size 0), the three columns are gone, and the rows that refer to them are as they were.
    @Test func aDatabaseFromBeforeOneRecordedLocationKeepsEveryPhotosLocation() async throws {
        let folder = try temporaryFolder()
        let before = try await Harness.database(in: folder, role: .client, also: Array(Schema.services.prefix(5)))
        let at = "file:///srv/storage/"
        let (group, profile, album, older) = ("group_photos/g1/photo.jpg", "profile_images/u1/a.jpg", "user_photos/u1/trip/p1.jpg", "user_photos/u1/trip/p0.jpg")
        try await before.write { db in
            let now = Date()
            for (id, key) in [("u1", profile as String?), ("u2", nil)] {
                try await db.insert(into: "user").columns("id", "displayName", "profilePhotoURL", "profilePhotoKey", "createdAt")
                    .values(SQLBind(id), SQLBind(id), SQLBind(key.map { at + $0 }), SQLBind(key), SQLBind(now)).run()
            }
            try await db.insert(into: "chatGroup").columns("id", "name", "createdBy", "photoURL", "photoState", "createdAt", "updatedAt")
                .values(SQLBind("g1"), SQLBind("Trip"), SQLBind("u1"), SQLBind(at + group), SQLBind("done"), SQLBind(now), SQLBind(now)).run()
            for (id, key) in [("p1", album), ("p0", older)] {
                try await db.insert(into: "albumPhoto").columns("id", "userId", "album", "key", "url", "state", "createdAt")
                    .values(SQLBind(id), SQLBind("u1"), SQLBind("trip"), SQLBind(key), SQLBind(at + key), SQLBind("done"), SQLBind(now)).run()
            }
            for key in [group, profile, album] {
                try await db.insert(into: "storedPhoto").columns("key", "location", "sha256", "size", "token", "storedAt")
                    .values(SQLBind(key), SQLBind(at + key), SQLBind(String(repeating: "ab", count: 32)), SQLBind(1234), SQLBind("t-" + key), SQLBind(now)).run()
            }
        }
        await before.close()

        let now = try await Harness.database(in: folder)
        #expect(try await Self.migrations(now).filter { $0.hasPrefix("services v6") }.count == 1)
        let photos = StoredPhotos(database: now)
        for key in [group, profile, album, older] {
            #expect(try await photos.location(of: key) == at + key, "\(key)")
        }
        let kept = try await photos.photos([album, older])
        #expect(kept[album]?.size == 1234 && kept[album]?.token == "t-" + album, "a recorded photo's row is as it was")
        #expect(kept[older]?.size == 0 && kept[older]?.sha256 == "" && kept[older]?.token.count == 32, "\(String(describing: kept[older]))")
        #expect(try await now.one(User.self, from: "user", id: "u1")?.profilePhotoKey == profile)
        #expect(try await now.one(ChatGroup.self, from: "chatGroup", id: "g1")?.photoState == .done)
        #expect(try await now.all(AlbumPhoto.self, from: "albumPhoto", orderBy: "id").map(\.key) == [older, album])
        // Each photo counts in its owner's quota (services v7): u1's profile picture and two album photos, not the group's.
        #expect(try await Quotas(database: now).account(of: "u1").usage == StorageUsage(bytes: 1234 + 1234, photos: 3))
        for (table, column) in [("chatGroup", "photoURL"), ("user", "profilePhotoURL"), ("albumPhoto", "url")] {
            await #expect(throws: (any Error).self, "\(table).\(column) is gone") {
                try await now.read { db in try await db.raw("SELECT \(ident: column) FROM \(ident: table)").run() }
            }
        }
        // Deleting the old photo frees its location (what the services delete), as for any other.
        let forgotten = try await now.write { db in try await StoredPhotos.forget(key: older, db).all }
        #expect(forgotten == [at + older])
    }

    static func migrations(_ database: AppDatabase) async throws -> [String] {
        try await database.read { db in try await db.select().column("name").from("schemaMigration").all(decodingColumn: "name", as: String.self) }
    }

    static func tables(_ database: AppDatabase) async throws -> Set<String> {
        try await database.read { db in
            switch database.kind {
            case .sqlite:
                Set(try await db.select().column("name").from("sqlite_master").where("type", .equal, "table")
                    .all(decodingColumn: "name", as: String.self))
            case .postgres:
                Set(try await db.select().column("table_name").from(SQLRaw("information_schema.tables")).where("table_schema", .equal, "public")
                    .all(decodingColumn: "table_name", as: String.self))
            }
        }
    }

    /// Dates, booleans, enums, optionals and JSON text round-trip through either database unchanged.
    @Test func recordsRoundTrip() async throws {
        let database = try await Harness.database(in: try temporaryFolder(), role: .client)
        let now = Date(timeIntervalSince1970: 1_795_000_000.25)
        let pending = PendingGroup(
            id: "g1", name: "Trip", participants: ["u2", "ü3"], photoJob: nil, state: .pending, error: nil, attempts: 2, createdAt: now, updatedAt: now)
        try await database.write { db in try await db.insert(into: "pendingGroup").model(pending).run() }
        let read = try #require(try await database.one(PendingGroup.self, from: "pendingGroup", id: "g1"))
        #expect(read == pending)
    }

    /// A transaction whose task is cancelled half-way is rolled back all the same, and its connection serves
    /// the next caller. SQLite's statements run through NIO's thread pool, which refuses work for a cancelled
    /// task (CancellationError, the statement not run): a ROLLBACK sent the same way never ran, and the
    /// connection went back to the pool inside the transaction — the next BEGIN failed with "cannot start a
    /// transaction within a transaction" (the lease renewal cancelled when a finishing ended did exactly this).
    @Test(arguments: [false, true]) func cancelledTransactionIsRolledBackAndItsConnectionServesTheNext(inMemory: Bool) async throws {
        let database = inMemory ? try await AppDatabase.inMemory() : try await Harness.database(in: try temporaryFolder())
        let cancelled = Task {
            try await database.write { db in
                try await db.insert(into: "user").model(User(id: "u1", displayName: "Ana")).run()
                withUnsafeCurrentTask { $0?.cancel() }
                try await db.insert(into: "user").model(User(id: "u2", displayName: "Bo")).run()
            }
        }
        await #expect(throws: (any Error).self) { try await cancelled.value }
        // The next transaction on the same pool: it begins, sees nothing of the cancelled one, and commits.
        try await database.write { db in
            try await db.insert(into: "user").model(User(id: "u3", displayName: "Cy")).run()
        }
        #expect(try await database.one(User.self, from: "user", id: "u1") == nil)
        #expect(try await database.one(User.self, from: "user", id: "u3")?.displayName == "Cy")
    }

    /// PostgreSQL's statement deadline closes a connection whose statement has not answered in time. What the
    /// transaction sends after that — here a statement after the failed one, caught, then its ROLLBACK — fails
    /// instead of being written to the closed connection and lost (PostgresNIO writes it without a promise: its
    /// caller waited forever). The connection is not lent again: the next transaction gets a new one.
    @Test func statementsOnAConnectionTheDeadlineClosedFailInsteadOfWaiting() async throws {
        let url = try await PostgresCluster.shared().newDatabase()
        // 5 s: far below the sleep it cuts, and room for the transaction after it on a new connection, which the same
        // deadline bounds — 1 s was too little for that one while the whole suite loaded the machine.
        let database = try await AppDatabase(postgres: url, connections: 1, deadline: .seconds(5))
        defer { Task { await database.close() } }
        // Ended at all (not waiting for ever) and failed (the 30 s sleep cut by the 5 s deadline, not run to its end)
        // is the point; how soon depends on how busy the machine is.
        let after = await #expect(throws: ServiceError.self) {
            try await database.write { db in
                let slow = try? await db.raw("SELECT pg_sleep(30)").run()
                #expect(slow == nil, "the sleep was cut by the deadline")
                try await db.raw("SELECT 1").run()
            }
        }
        // PostgresNIO's own failure for the statement in flight, or ours for one sent after the close.
        #expect("\(after.map { "\($0)" } ?? "")".lowercased().contains("closed"), "\(String(describing: after))")
        try await database.write { db in try await db.insert(into: "user").model(User(id: "u1", displayName: "Ana")).run() }
        #expect(try await database.one(User.self, from: "user", id: "u1")?.displayName == "Ana")
    }
}
