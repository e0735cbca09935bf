import Foundation
import PhotoFiles
import NIOPosix
import PhotoServices
import PhotoUpload
import SQLKit

/// Uploads in progress shared by every instance behind a load balancer: records in the shared database
/// (`tusUpload`), bytes in the bucket. Each durable piece of an upload is one object,
/// `partial-uploads/{id}/{start}-{random}`, listed in `tusUploadPiece`; the upload's offset (`received`)
/// only moves in the transaction that lists a piece, and only from where that piece starts — two requests
/// racing at one offset (on two instances) cannot both count, and the loser's object is deleted. Like
/// tusd's s3store, which keeps a short tail as a separate object: S3's multipart parts must be 5 MiB
/// except the last, and a photo here is under 10 MiB, so nearly every upload would be all tail.
///
/// A request's bytes become a piece when it ends, and every `pieceSize` bytes before (unless its checksum
/// covers the whole body): an instance killed half-way through a large PATCH leaves what it made durable,
/// and the client's retry continues from there through any instance.
///
/// Finishing (normalise, store, record) is held by one instance under a lease renewed while it runs; an
/// instance that vanished loses it when the lease runs out, and another takes over. Every holding is a
/// row of `tusUploadFinish` (runner, start, end, outcome), so "never finished twice at once" is checkable.
final class SharedUploadStore: PartialUploadStore {
    let database: AppDatabase
    let objects: S3Objects
    /// Where the complete bytes are gathered into a file to be prepared (and removed after).
    let folder: URL
    let io: NIOThreadPool
    let lease: Duration
    /// The longest a finishing renews its lease: well past its own bound (`FinishDeadline`, 30 s) and what cancelled
    /// work may still wait on (a 20 s bucket request, a 10 s database deadline).
    static let finishBound = Duration.seconds(120)
    /// This instance's id in finishing leases (random: no host names, no process ids).
    let runner = "serve-" + TusUpload.newID().prefix(12)
    let pieceSize: Int
    /// More pieces than this and the upload's PATCHes are refused (each piece is an object and a row).
    let maxPieces: Int

    init(
        database: AppDatabase, objects: S3Objects, folder: URL, io: NIOThreadPool, lease: Duration = .seconds(30), pieceSize: Int = 1 << 20,
        maxPieces: Int = 1000
    ) throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        self.database = database
        self.objects = objects
        self.folder = folder
        self.io = io
        self.lease = lease
        self.pieceSize = pieceSize
        self.maxPieces = maxPieces
    }

    /// Where an upload's pieces are; `piecesPrefix("")`: all of them.
    static func piecesPrefix(_ id: String) -> String { id.isEmpty ? "partial-uploads/" : "partial-uploads/\(id)/" }

    // MARK: - Records

    func create(_ upload: TusUpload) async throws(UploadStoreFailure) {
        try await write { db in try await db.insert(into: "tusUpload").model(Row(upload), nilEncodingStrategy: .asNil).run() }
    }

    func upload(_ id: String) async throws(UploadStoreFailure) -> TusUpload? {
        guard TusUpload.isValidID(id) else { return nil }
        return try await read { db in try await Self.row(id, db)?.upload() }
    }

    /// `locking`: the row stays locked until the transaction ends (PostgreSQL; SQLite's write
    /// transaction holds the whole database).
    private static func row(_ id: String, _ db: any SQLDatabase, locking: Bool = false) async throws -> Row? {
        var query = db.select().columns("*").from("tusUpload").where("id", .equal, id)
        if locking { query = query.for(.update) }
        return try await query.first(decoding: Row.self)
    }

    func offset(_ id: String) async throws(UploadStoreFailure) -> Int64 {
        try await read { db in
            try await db.select().column("received").from("tusUpload").where("id", .equal, id).first(decodingColumn: "received", as: Int64.self)
        } ?? 0
    }

    /// One listing of the upload's pieces in the bucket against its rows: a piece recorded but not there is lost.
    func lostBytes(_ id: String) async throws(UploadStoreFailure) -> Bool {
        let recorded = try await pieces(of: id)
        guard !recorded.isEmpty else { return false }
        let there: Set<String>
        do { there = Set(try await objects.list(prefix: Self.piecesPrefix(id))) } catch { throw UploadStoreFailure(description: "\(error)") }
        return recorded.contains { !there.contains($0.objectKey) }
    }

    func head(_ id: String, count: Int) async throws(UploadStoreFailure) -> [UInt8] {
        var bytes: [UInt8] = []
        for piece in try await pieces(of: id) where bytes.count < count {
            let data: [UInt8]?
            do { data = try await objects.get(piece.objectKey) } catch { throw UploadStoreFailure(description: "\(error)") }
            guard let data else { throw UploadStoreFailure(description: "\(piece.objectKey): missing from the bucket") }
            bytes += data.prefix(count - bytes.count)
        }
        return bytes
    }

    func all() async throws(UploadStoreFailure) -> [TusUpload] {
        try await read { db in try await db.select().columns("*").from("tusUpload").all(decoding: Row.self).map { try $0.upload() } }
    }

    private func pieces(of id: String) async throws(UploadStoreFailure) -> [Piece] {
        try await read { db in try await Self.pieces(of: id, db) }
    }

    private static func pieces(of id: String, _ db: any SQLDatabase) async throws -> [Piece] {
        try await db.select().columns("*").from("tusUploadPiece").where("upload", .equal, id).orderBy("start").all(decoding: Piece.self)
    }

    @discardableResult func delete(_ id: String) async throws(UploadStoreFailure) -> Bool {
        let locking = database.kind == .postgres
        let pieces = try await write { db -> [Piece]? in
            guard let row = try await Self.row(id, db, locking: locking) else { return [] }
            if row.isBeingFinished(at: Date()) { return nil }
            let pieces = try await Self.pieces(of: id, db)
            try await db.delete(from: "tusUpload").where("id", .equal, id).run()
            return pieces
        }
        guard let pieces else { return false }
        await deleteObjects(pieces.map(\.objectKey))
        return true
    }

    /// Deletes objects, four at a time. One that stays (the bucket failed) is found by `housekeeping`.
    private func deleteObjects(_ keys: [String]) async {
        let objects = self.objects
        await BoundedConcurrency.run(count: keys.count, limit: 4) { index in _ = try? await objects.delete(keys[index]) }
    }

    /// Drops the finishing history begun more than a week ago, and deletes the objects under
    /// `partial-uploads/` that belong to no upload still receiving: pieces of an instance killed between
    /// putting a piece and listing it, or whose deletion failed. (A piece is put only after its upload's
    /// record exists, and only while it is receiving, so nothing in flight is touched.)
    func housekeeping(now: Date) async {
        _ = try? await write { db in try await db.delete(from: "tusUploadFinish").where("startedAt", .lessThan, SQLBind(now - 7 * 24 * 3600)).run() }
        guard let keys = try? await objects.list(prefix: Self.piecesPrefix("")),
            let receiving = try? await read({ db in
                try await db.select().column("id").from("tusUpload").where("state", .equal, TusUpload.State.receiving.rawValue)
                    .all(decodingColumn: "id", as: String.self)
            })
        else { return }
        let live = Set(receiving)
        await deleteObjects(keys.filter { key in !live.contains(String(key.dropFirst(Self.piecesPrefix("").count).prefix(32))) })
    }

    // MARK: - Receiving

    func appender(_ id: String, at offset: Int64, wholeRequest: Bool) async throws(UploadStoreFailure) -> any UploadAppender {
        PieceAppender(store: self, id: id, start: offset, flushEvery: wholeRequest ? nil : pieceSize)
    }

    /// Puts `bytes` as the piece at `start`, then lists it — if the upload still holds exactly `start`
    /// bytes (else another request got there first: the object is deleted, `conflict`).
    func addPiece(_ id: String, at start: Int64, _ bytes: [UInt8]) async throws(UploadStoreFailure) {
        let key = Self.piecesPrefix(id) + String(format: "%012lld", start) + "-" + TusUpload.newID().prefix(8)
        do { try await objects.put(key, bytes) } catch { throw UploadStoreFailure(kind: error.isFull ? .full : .storage, description: "\(error)") }
        let maxPieces = self.maxPieces
        let added: Result<Void, UploadStoreFailure>
        do {
            added = try await database.write { db -> Result<Void, UploadStoreFailure> in
                let count = try await db.select().column(SQLFunction("COUNT", args: SQLLiteral.all), as: "n").from("tusUploadPiece")
                    .where("upload", .equal, id).first(decodingColumn: "n", as: Int.self) ?? 0
                guard count < maxPieces else {
                    return .failure(
                        UploadStoreFailure(
                            kind: .tooManyPieces, description: "the upload is in \(count) pieces already: send the rest in larger PATCH requests"))
                }
                let moved = try await db.update("tusUpload").set("received", to: SQLBind(start + Int64(bytes.count)))
                    .where("id", .equal, id).where("received", .equal, start).where("state", .equal, TusUpload.State.receiving.rawValue)
                    .returning("id").all()
                guard !moved.isEmpty else {
                    return .failure(UploadStoreFailure(kind: .conflict, description: "another request wrote to the upload at \(start) first"))
                }
                try await db.insert(into: "tusUploadPiece").model(Piece(upload: id, start: start, length: Int64(bytes.count), objectKey: key)).run()
                return .success(())
            }
        } catch {
            try? await objects.delete(key)
            throw UploadStoreFailure(description: "\(error)")
        }
        if case .failure(let failure) = added {
            try? await objects.delete(key)
            throw failure
        }
    }

    /// Unlists the pieces from `start` on that this request added (the upload held `end`), back to `start`.
    func removePieces(_ id: String, from start: Int64, through end: Int64) async {
        let removed = try? await database.write { db -> [Piece] in
            let moved = try await db.update("tusUpload").set("received", to: SQLBind(start)).where("id", .equal, id).where("received", .equal, end)
                .returning("id").all()
            guard !moved.isEmpty else { return [] }
            let pieces = try await Self.pieces(of: id, db).filter { $0.start >= start }
            try await db.delete(from: "tusUploadPiece").where("upload", .equal, id).where("start", .greaterThanOrEqual, start).run()
            return pieces
        }
        for piece in removed ?? [] { try? await objects.delete(piece.objectKey) }
    }

    // MARK: - Finishing

    func finishing(
        _ upload: TusUpload, within deadline: FinishDeadline, _ store: @escaping @Sendable (_ file: String) async -> Result<String, FinishRefusal>
    ) async -> Result<String, FinishRefusal>? {
        let claimed: Bool
        do { claimed = try await claimFinishing(upload.id) } catch { return .failure(.init(kind: .unavailable, description: "\(error)")) }
        guard claimed else { return nil }
        let file = folder.appendingPathComponent("\(upload.id)-\(runner).bin").path
        defer { unlink(file) }
        let (lease, runner) = (self.lease, self.runner)
        // Renewed while the pieces are gathered and the photo prepared and stored — for at most `finishBound`: a
        // finisher stuck past it lets the lease run out, and a retry or another instance takes the upload over (this
        // one then records nothing: it no longer holds it).
        let outcome = await LeaseRenewal.holding(for: lease, atMost: Self.finishBound) { [self] in
            _ = try? await write { db in
                try await db.update("tusUpload").set("finishLeaseExpiresAt", to: SQLBind(Date() + lease.timeInterval))
                    .where("id", .equal, upload.id).where("finishOwner", .equal, runner).run()
            }
            return true
        } _: { [self] in
            await deadline.run { [self] () -> Result<String, FinishRefusal> in
                do throws(UploadStoreFailure) {
                    try await PieceAssembly(objects: objects, io: io).write(try await pieces(of: upload.id), of: upload, to: file)
                } catch {
                    return .failure(.init(kind: error.kind == .gone ? .gone : error.kind == .full ? .full : .unavailable, description: "\(error)"))
                }
                return await store(file)
            }
        }
        let me = runner, locking = database.kind == .postgres
        // Only while still holding it: a runner that lost its lease records nothing over its successor.
        let freed = try? await database.write { db -> [Piece] in
            guard try await Self.row(upload.id, db, locking: locking)?.finishOwner == me else { return [] }
            let ended = db.update("tusUploadFinish").set("endedAt", to: SQLBind(Date()))
                .where("upload", .equal, upload.id).where("runner", .equal, me).where("endedAt", .is, SQLLiteral.null)
            let release = db.update("tusUpload").set("finishOwner", to: SQLLiteral.null).set("finishLeaseExpiresAt", to: SQLLiteral.null)
                .where("id", .equal, upload.id)
            switch outcome {
            case .success:
                // Stored: the record stays (a client asking again learns it finished), its pieces go.
                try await ended.set("outcome", to: SQLBind("done")).run()
                try await release.set("state", to: SQLBind(TusUpload.State.stored.rawValue)).run()
                let pieces = try await Self.pieces(of: upload.id, db)
                try await db.delete(from: "tusUploadPiece").where("upload", .equal, upload.id).run()
                return pieces
            case .failure(let refusal) where refusal.keepsBytes:
                try await ended.set("outcome", to: SQLBind("unavailable: \(refusal.description)")).run()
                try await release.run()
                return []
            case .failure(let refusal):
                try await ended.set("outcome", to: SQLBind("refused (\(refusal.kind.rawValue)): \(refusal.description)")).run()
                let pieces = try await Self.pieces(of: upload.id, db)
                try await db.delete(from: "tusUpload").where("id", .equal, upload.id).run()
                return pieces
            }
        }
        await deleteObjects(freed?.map(\.objectKey) ?? [])
        return outcome
    }

    /// Takes the finishing of a complete upload: nobody holds it, or its holder's lease ran out (that
    /// holding ends as `lease expired`). False when it is not complete, already stored, or held.
    private func claimFinishing(_ id: String, now: Date = Date()) async throws(UploadStoreFailure) -> Bool {
        let runner = self.runner, lease = self.lease, locking = database.kind == .postgres
        return try await write { db in
            guard let row = try await Self.row(id, db, locking: locking), row.state == TusUpload.State.receiving.rawValue, row.received == row.length else {
                return false
            }
            if let holder = row.finishOwner, holder != runner {
                guard !row.isBeingFinished(at: now) else { return false }
                try await db.update("tusUploadFinish").set("endedAt", to: SQLBind(now)).set("outcome", to: SQLBind("lease expired"))
                    .where("upload", .equal, id).where("runner", .equal, holder).where("endedAt", .is, SQLLiteral.null).run()
            }
            try await db.update("tusUpload").set("finishOwner", to: SQLBind(runner)).set("finishLeaseExpiresAt", to: SQLBind(now + lease.timeInterval))
                .where("id", .equal, id).run()
            try await db.insert(into: "tusUploadFinish").columns("upload", "runner", "startedAt").values(SQLBind(id), SQLBind(runner), SQLBind(now)).run()
            return true
        }
    }

    // MARK: - Database calls

    private func read<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws(UploadStoreFailure) -> T {
        do { return try await database.read(body) } catch { throw UploadStoreFailure(description: "\(error)") }
    }

    private func write<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws(UploadStoreFailure) -> T {
        do { return try await database.write(body) } catch { throw UploadStoreFailure(description: "\(error)") }
    }
}
