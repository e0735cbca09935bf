import Foundation
import Logging
import Synchronization
import NIOCore
import NIOPosix
@testable import PhotoServer
import PhotoServices
import PhotoUpload
import SQLKit
import Testing
import TestSupport

/// The store that lets several `photoprep serve` instances share uploads in progress: records in the
/// database (SQLite and PostgreSQL alike), pieces in an S3 bucket (moto). Two store objects on one
/// database and bucket are two instances.
@Suite struct SharedUploadStoreTests {
    /// A finishing bound far longer than any test: on a loaded machine the work below may take longer than the
    /// server's 30 s, and would rightly be cancelled (the bound is tested through the built server).
    static let unbounded = FinishDeadline(bound: .seconds(600))

    struct Setup {
        let moto: MotoServer
        let database: AppDatabase
        let objects: S3Objects
        let io: NIOThreadPool
        let folder: URL

        func store(lease: Duration = .seconds(30), pieceSize: Int = 1 << 20, maxPieces: Int = 1000) throws -> SharedUploadStore {
            try SharedUploadStore(database: database, objects: objects, folder: folder, io: io, lease: lease, pieceSize: pieceSize, maxPieces: maxPieces)
        }

        /// Keys of the objects holding pieces of `id`.
        func pieceObjects(_ id: String) async throws -> [String] { try await objects.list(prefix: "partial-uploads/\(id)/") }

        func newUpload(length: Int64, owner: String = "u1") async throws -> TusUpload {
            let upload = TusUpload(
                id: TusUpload.newID(), owner: owner, ownerName: "Ana", path: .userPhoto(userId: owner, album: "trip", file: "a.jpg"), length: length, metadata: ["filename": "a.jpg"],
                createdAt: Date(), expiresAt: Date() + 3600, state: .receiving)
            try await store().create(upload)
            return upload
        }
    }

    static func setup(_ database: String) async throws -> Setup {
        let moto = try await onThread { try MotoServer() }
        try await moto.createBucket("shared")
        let db = database == "postgres"
            ? try await AppDatabase(postgres: try await PostgresCluster.shared().newDatabase(), role: .server, also: UploadSchema.migrations)
            : try await AppDatabase.inMemory(role: .server, also: UploadSchema.migrations)
        let io = NIOThreadPool(numberOfThreads: 1)
        io.start()
        let objects = S3Objects(store: try S3Store(url: "s3://shared/prod", environment: moto.environment()))
        return Setup(moto: moto, database: db, objects: objects, io: io, folder: try temporaryFolder())
    }

    static func buffer(_ bytes: ArraySlice<UInt8>) -> ByteBuffer { ByteBuffer(bytes: bytes) }

    /// The upload tables are the server's (`UploadSchema`), added to the services' database by the server alone: a
    /// database opened with them has them, and one opened again runs nothing twice — as a database the server migrated
    /// when these tables were part of the services' schema does not (their migration's name is the one it had). A
    /// stored upload made before its record lost its location (`uploads v2`) is kept, without it.
    @Test(arguments: ["sqlite", "postgres"]) func theUploadTablesAreTheServersOwn(database: String) async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let location = database == "postgres" ? try await PostgresCluster.shared().newDatabase() : folder.appendingPathComponent("app.sqlite").path
        let tables: Set = ["tusUpload", "tusUploadPiece", "tusUploadFinish"]
        let services = try await AppDatabase.open(location, role: .server)
        #expect(try await Self.tables(services).isDisjoint(with: tables), "the services' schema alone has no upload tables")
        await services.close()
        let before = try await AppDatabase.open(location, role: .server, also: [UploadSchema.migrations[0]])
        try await before.write { db in
            try await db.insert(into: "tusUpload")
                .columns("id", "owner", "key", "length", "metadata", "createdAt", "expiresAt", "state", "url", "received")
                .values(SQLBind("a1"), SQLBind("u1"), SQLBind("user_photos/u1/trip/a.jpg"), SQLBind(10), SQLBind("{}"), SQLBind(Date()), SQLBind(Date()),
                        SQLBind("stored"), SQLBind("file:///srv/storage/user_photos/u1/trip/a.jpg"), SQLBind(10))
                .run()
        }
        await before.close()
        for _ in 0..<2 {
            let server = try await AppDatabase.open(location, role: .server, also: UploadSchema.migrations)
            #expect(try await Self.tables(server).isSuperset(of: tables))
            let names = try await server.read { db in
                try await db.select().column("name").from("schemaMigration").all(decodingColumn: "name", as: String.self)
            }
            #expect(names.filter { $0 == "uploads v1: shared partial uploads" }.count == 1)
            #expect(names.filter { $0.hasPrefix("uploads v2") }.count == 1)
            let kept = try await server.read { db in try await db.select().column("state").from("tusUpload").where("id", .equal, "a1").all(decodingColumn: "state", as: String.self) }
            #expect(kept == ["stored"])
            await #expect(throws: (any Error).self, "the location is gone from the upload's record") {
                try await server.read { db in try await db.raw("SELECT \(ident: "url") FROM \(ident: "tusUpload")").run() }
            }
            await server.close()
        }
    }

    static func tables(_ database: AppDatabase) async throws -> Set<String> {
        try await database.read { db in
            switch database.kind {
            case .sqlite:
                Set(try await db.select().column("name").from("sqlite_master").where("type", .equal, "table").all(decodingColumn: "name", as: String.self))
            case .postgres:
                Set(try await db.select().column("table_name").from(SQLRaw("information_schema.tables")).where("table_schema", .equal, "public")
                    .all(decodingColumn: "table_name", as: String.self))
            }
        }
    }

    /// Two requests (on two instances) writing at the same offset: the first to make its bytes durable
    /// counts, the other is refused as a conflict and its object deleted; a request's own pieces are undone
    /// by its rollback; the record reads back as created.
    @Test(arguments: ["sqlite", "postgres"]) func aPieceCountsOnlyFromWhereTheUploadStands(database: String) async throws {
        let setup = try await Self.setup(database)
        let a = try setup.store(), b = try setup.store(pieceSize: 4)
        let bytes = testBytes(20)
        let upload = try await setup.newUpload(length: 20)
        // The record as created (dates to the database's precision: microseconds on PostgreSQL).
        var read = try #require(try await b.upload(upload.id))
        #expect(abs(read.createdAt.timeIntervalSince(upload.createdAt)) < 0.001 && abs(read.expiresAt.timeIntervalSince(upload.expiresAt)) < 0.001)
        (read.createdAt, read.expiresAt) = (upload.createdAt, upload.expiresAt)
        #expect(read == upload)

        let first = try await a.appender(upload.id, at: 0, wholeRequest: false)
        let second = try await b.appender(upload.id, at: 0, wholeRequest: true)
        try await first.write(Self.buffer(bytes[0..<6]))
        try await second.write(Self.buffer(bytes[0..<8]))
        try await first.sync()
        await #expect(throws: UploadStoreFailure.self) { try await second.sync() }
        #expect(try await a.offset(upload.id) == 6)
        #expect(try await b.offset(upload.id) == 6)
        #expect(try await setup.pieceObjects(upload.id).count == 1)
        #expect(try await b.head(upload.id, count: 4) == Array(bytes[0..<4]))

        // Pieces made every 4 bytes on the way; the rollback takes this request's back to 6.
        let third = try await b.appender(upload.id, at: 6, wholeRequest: false)
        try await third.write(Self.buffer(bytes[6..<11]))
        #expect(try await a.offset(upload.id) == 11)
        try await third.write(Self.buffer(bytes[11..<13]))
        #expect(third.count == 7)
        await third.rollback()
        #expect(try await a.offset(upload.id) == 6)
        #expect(try await setup.pieceObjects(upload.id).count == 1)

        let rest = try await a.appender(upload.id, at: 6, wholeRequest: false)
        try await rest.write(Self.buffer(bytes[6...]))
        try await rest.sync()
        #expect(try await b.offset(upload.id) == 20)
        #expect(try await b.head(upload.id, count: 10) == Array(bytes[0..<10]))

        #expect(try await a.delete(upload.id))
        #expect(try await b.upload(upload.id) == nil)
        #expect(try await setup.pieceObjects(upload.id).isEmpty)

        // The database gone: an error, never "no such upload" or "0 bytes held" (a client told 404 would
        // start again; one told 0 would send everything again).
        let kept = try await setup.newUpload(length: 20)
        await setup.database.close()
        await #expect(throws: UploadStoreFailure.self) { try await b.upload(kept.id) }
        await #expect(throws: UploadStoreFailure.self) { try await b.offset(kept.id) }
        await #expect(throws: UploadStoreFailure.self) { try await b.all() }
    }

    /// A client sending one-byte PATCHes cannot make a thousand objects: past `maxPieces` it is refused.
    @Test func anUploadInTooManyPiecesIsRefused() async throws {
        let setup = try await Self.setup("sqlite")
        let store = try setup.store(maxPieces: 3)
        let upload = try await setup.newUpload(length: 10)
        for offset in 0..<3 {
            let appender = try await store.appender(upload.id, at: Int64(offset), wholeRequest: false)
            try await appender.write(Self.buffer([UInt8(offset)][...]))
            try await appender.sync()
        }
        let fourth = try await store.appender(upload.id, at: 3, wholeRequest: false)
        try await fourth.write(Self.buffer([3][...]))
        let failure = await #expect(throws: UploadStoreFailure.self) { try await fourth.sync() }
        #expect(failure?.kind == .tooManyPieces)
        #expect(try await store.offset(upload.id) == 3)
        #expect(try await setup.pieceObjects(upload.id).count == 3)
    }

    /// Finishing: the complete bytes arrive as one file; while one instance finishes, another is told
    /// no (nil); stored, the record says so and the pieces are gone. An instance that vanished while
    /// finishing (its lease left in the database) is taken over once the lease ran out, and the history
    /// says so, without overlap.
    @Test(arguments: ["sqlite", "postgres"]) func finishingIsHeldByOneInstanceAtATime(database: String) async throws {
        let setup = try await Self.setup(database)
        // Leases far longer than the test: on a loaded machine a's finishing below may take longer than the 30 s
        // default, and b would rightly take it over (the takeover is tested with a lease set into the past).
        let a = try setup.store(lease: .seconds(600)), b = try setup.store(lease: .seconds(600))
        let photo = try Fixture.bytes("photos/ladybird-2560x1600.jpg")
        let upload = try await setup.newUpload(length: Int64(photo.count))
        for range in [0..<100_000, 100_000..<photo.count] {
            let appender = try await a.appender(upload.id, at: Int64(range.lowerBound), wholeRequest: true)
            try await appender.write(Self.buffer(photo[range]))
            try await appender.sync()
        }
        let outcome = await a.finishing(upload, within: Self.unbounded) { file in
            #expect(FileManager.default.contents(atPath: file).map { [UInt8]($0) } == photo)
            #expect(await b.finishing(upload, within: Self.unbounded) { _ in .success("not this one") } == nil)
            // Nor can b delete it meanwhile (its photo is on its way to storage): refused, nothing removed.
            #expect((try? await b.delete(upload.id)) == false)
            #expect((try? await b.upload(upload.id))??.id == upload.id)
            #expect((try? await setup.pieceObjects(upload.id))?.count == 2)
            return .success("s3://shared/prod/\(upload.key)")
        }
        #expect(try outcome?.get() == "s3://shared/prod/\(upload.key)")
        let stored = try #require(try await b.upload(upload.id))
        #expect(stored.state == .stored)
        #expect(try await setup.pieceObjects(upload.id).isEmpty)
        #expect(await b.finishing(stored, within: Self.unbounded) { _ in .success("again") } == nil)

        // Storage unavailable: kept for the next attempt. A refusal that is final: gone.
        let second = try await setup.newUpload(length: Int64(photo.count))
        let appender = try await a.appender(second.id, at: 0, wholeRequest: true)
        try await appender.write(Self.buffer(photo[...]))
        try await appender.sync()
        let unavailable = await a.finishing(second, within: Self.unbounded) { _ in .failure(.init(kind: .unavailable, description: "bucket down")) }
        #expect(unavailable.map { if case .failure(let refusal) = $0 { refusal.kind == .unavailable } else { false } } == true)
        #expect(try await a.upload(second.id)?.state == .receiving)
        #expect(try await setup.pieceObjects(second.id).count == 1)

        // A vanished instance's holding, as its crash left it: b is refused while the lease runs, and takes
        // over once it ran out (moved into the past here rather than waited for: a loaded machine's clock
        // must not decide the test).
        let vanished = Date()
        try await setup.database.write { db in
            try await db.update("tusUpload").set("finishOwner", to: SQLBind("serve-vanished")).set("finishLeaseExpiresAt", to: SQLBind(vanished + 3600))
                .where("id", .equal, second.id).run()
            try await db.insert(into: "tusUploadFinish").columns("upload", "runner", "startedAt")
                .values(SQLBind(second.id), SQLBind("serve-vanished"), SQLBind(vanished)).run()
        }
        #expect(await b.finishing(second, within: Self.unbounded) { _ in .success("too early") } == nil)
        #expect(try await b.delete(second.id) == false)
        try await setup.database.write { db in
            try await db.update("tusUpload").set("finishLeaseExpiresAt", to: SQLBind(Date() - 1)).where("id", .equal, second.id).run()
        }
        let refused = await b.finishing(second, within: Self.unbounded) { _ in .failure(.init(kind: .unprocessable, description: "not a photo after all")) }
        #expect(refused != nil)
        #expect(try await a.upload(second.id) == nil)
        #expect(try await setup.pieceObjects(second.id).isEmpty)

        struct Run: Decodable { var runner: String; var startedAt: Date; var endedAt: Date?; var outcome: String? }
        let runs = try await setup.database.all(Run.self, from: "tusUploadFinish", where: "upload", second.id, orderBy: "id")
        #expect(runs.map(\.outcome) == ["unavailable: bucket down", "lease expired", "refused (unprocessable): not a photo after all"])
        #expect(runs[1].runner == "serve-vanished" && runs[2].runner == b.runner && runs[0].runner == a.runner)
        // Never two at once: each holding ended before the next began.
        for (earlier, later) in zip(runs, runs.dropFirst()) { #expect(try #require(earlier.endedAt) <= later.startedAt) }
        #expect(try await setup.database.count("tusUploadFinish", where: "upload", upload.id) == 1)

        // The expiry sweep keeps a week of history.
        await a.housekeeping(now: Date())
        #expect(try await setup.database.count("tusUploadFinish") == 4)
        await a.housekeeping(now: Date() + 8 * 24 * 3600)
        #expect(try await setup.database.count("tusUploadFinish") == 0)
    }

    /// The expiry sweep on a shared store: an expired upload goes with its pieces; a complete one that was
    /// never stored (its instance stopped in between) is handed to `finish`; one still arriving stays; a
    /// piece of no upload is deleted.
    @Test func theSweepDeletesExpiredUploadsAndFinishesCompleteOnes() async throws {
        let setup = try await Self.setup("sqlite")
        let store = try setup.store()
        let expired = try await setup.newUpload(length: 10)
        let complete = try await setup.newUpload(length: 4)
        let arriving = try await setup.newUpload(length: 10)
        for (upload, count) in [(expired, 3), (complete, 4), (arriving, 3)] {
            let appender = try await store.appender(upload.id, at: 0, wholeRequest: false)
            try await appender.write(Self.buffer(testBytes(count)[...]))
            try await appender.sync()
        }
        try await setup.database.write { db in
            try await db.update("tusUpload").set("expiresAt", to: SQLBind(Date() - 1)).where("id", .equal, expired.id).run()
        }
        // A piece an instance put and was killed before listing, of an upload gone since.
        let orphan = "partial-uploads/\(TusUpload.newID())/000000000000-0a1b2c3d"
        try await setup.objects.put(orphan, [1, 2, 3])
        let finished = Mutex<[String]>([])
        let sweeper = UploadSweeper(
            store: store, metrics: ServerMetrics(), interval: .seconds(60), finish: { upload in finished.withLock { $0.append(upload.id) } },
            logger: Logger(label: "test"))
        await sweeper.sweep()
        #expect(try await store.upload(expired.id) == nil)
        #expect(try await setup.pieceObjects(expired.id).isEmpty)
        #expect(finished.withLock { $0 } == [complete.id])
        #expect(try await store.upload(arriving.id)?.state == .receiving)
        #expect(try await setup.pieceObjects(arriving.id).count == 1)
        #expect(try await setup.objects.get(orphan) == nil)
    }
}
