import Foundation
import SQLKit
@testable import PhotoServices
import Testing
import TestSupport

@Suite struct AppDatabaseTests {
    /// The schema's migrations run once: a database opened again (another process, another instance)
    /// keeps its rows and records each migration once; every table is there.
    @Test func migrationsRunOnceAndRowsSurviveReopening() async throws {
        let folder = try temporaryFolder()
        let first = try await Harness.database(in: folder)
        try await first.write { db in
            try await db.insert(into: "user").model(User(id: "u1", displayName: "Ana")).run()
        }
        await first.close()

        let again = try await Harness.database(in: folder)
        let names = try await again.read { db in
            try await db.select().column("name").from("schemaMigration").all(decodingColumn: "name", as: String.self)
        }
        #expect(names.sorted() == Schema.migrations.map(\.name).sorted())
        #expect(try await again.one(User.self, from: "user", id: "u1")?.displayName == "Ana")
        for table in ["user", "chatGroup", "groupMember", "message", "notification", "albumPhoto", "photoJob", "pendingGroup", "staleObject", "photoJobRun"] {
            #expect(try await again.count(table) >= 0, "\(table)")
        }
    }

    /// Dates, booleans, enums, optionals and JSON text round-trip through either database unchanged.
    @Test func recordsRoundTrip() async throws {
        let database = try await Harness.database(in: try temporaryFolder())
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
}
