package import Foundation
import SQLKit

/// Every query about photo jobs, behind named methods: the runner, the services and the client say
/// what they want done to a job, this says how in SQL (the same on SQLite and PostgreSQL).
///
/// A job is held by one runner at a time through a **lease**: `leaseOwner` (a runner's random id) and
/// `leaseExpiresAt`. Claiming happens in one write transaction — on PostgreSQL with
/// `SELECT … FOR UPDATE SKIP LOCKED`, so runners on several machines never wait for or take the same
/// job; on SQLite the transaction holds the write lock. A runner renews its leases while it works; a job
/// whose lease ran out (its runner's machine died) is taken over by whichever runner claims it next.
/// Every holding is recorded in `photoJobRun`.
public struct JobStore: Sendable {
    let database: AppDatabase
    /// Whether a job's state and its stored photo are recorded on what it belongs to (the group, the
    /// user, the album photo) in this database: true for the embedded services; false for a client of
    /// `photoprep serve`, whose server records them (its database has no such tables).
    let recordsEffects: Bool
    /// Where this store's runner uploads: new jobs record it, and the runner takes only jobs recorded
    /// for it (or for no destination, from before they were recorded). Nil: any job.
    public let destination: String?

    public init(database: AppDatabase, recordsEffects: Bool = true, destination: String? = nil) {
        self.database = database
        self.recordsEffects = recordsEffects
        self.destination = destination
    }

    /// Whether this store's runner may run `job`: it goes where the runner uploads.
    public func runs(_ job: PhotoJob) -> Bool {
        job.destination == nil || destination == nil || job.destination == destination
    }

    // MARK: - Reading

    public func job(_ id: String) async throws(ServiceError) -> PhotoJob? {
        try await database.read { db in try await Self.job(id, db) }
    }

    static func job(_ id: String, _ db: any SQLDatabase) async throws -> PhotoJob? {
        try await db.select().columns("*").from("photoJob").where("id", .equal, id).first(decoding: PhotoJob.self)
    }

    /// The jobs that are not done, oldest first.
    public func unfinished() async throws(ServiceError) -> [PhotoJob] {
        try await database.read { db in
            try await db.select().columns("*").from("photoJob").where("state", .notEqual, PhotoState.done.rawValue)
                .orderBy("createdAt").orderBy("id").all(decoding: PhotoJob.self)
        }
    }

    /// Jobs a runner may start now, oldest first: pending, or uploading under a lease that ran out; and
    /// not waiting for a group the server does not have yet.
    func runnable(at now: Date = Date()) async throws(ServiceError) -> [String] {
        try await database.read { db in
            try await claimable(db.select().column("id").from("photoJob"), at: now)
                .orderBy("createdAt").orderBy("id").all(decodingColumn: "id", as: String.self)
        }
    }

    /// Jobs another runner holds now (`uploading` under a live lease), with when their leases end.
    func heldByOthers(than runner: String, at now: Date = Date()) async throws(ServiceError) -> [(id: String, until: Date)] {
        try await database.read { db in
            try await going(db.select().columns("id", "leaseExpiresAt").from("photoJob"))
                .where("state", .equal, PhotoState.uploading.rawValue).where("leaseExpiresAt", .greaterThanOrEqual, now)
                .where("leaseOwner", .notEqual, runner)
                .all().map { row in (try row.decode(column: "id", as: String.self), try row.decode(column: "leaseExpiresAt", as: Date.self)) }
        }
    }

    /// Jobs a runner may take at `now`: going where it uploads, not waiting for a group, and pending or held
    /// under a lease that ran out.
    private func claimable(_ query: SQLSelectBuilder, at now: Date) -> SQLSelectBuilder {
        going(query).where("waitsFor", .is, SQLLiteral.null).where { claimable in
            claimable.where("state", .equal, PhotoState.pending.rawValue)
                .orWhere { $0.where("state", .equal, PhotoState.uploading.rawValue).where("leaseExpiresAt", .lessThan, now) }
        }
    }

    /// The jobs going where this store's runner uploads (`runs(_:)`).
    private func going(_ query: SQLSelectBuilder) -> SQLSelectBuilder {
        guard let destination else { return query }
        return query.where { $0.where("destination", .is, SQLLiteral.null).orWhere("destination", .equal, destination) }
    }

    /// Every holding of the job by a runner, in order.
    public func runs(of id: String) async throws(ServiceError) -> [PhotoJobRun] {
        try await database.read { db in
            try await db.select().columns("*").from("photoJobRun").where("job", .equal, id).orderBy("id").all(decoding: PhotoJobRun.self)
        }
    }

    // MARK: - Creating

    /// Records a new job in the caller's transaction (with what it belongs to).
    static func insert(_ job: PhotoJob, _ db: any SQLDatabase) async throws {
        try await db.insert(into: "photoJob").model(job, nilEncodingStrategy: .asNil).run()
    }

    // MARK: - Claiming and holding

    /// Takes the job for `runner` until `now + lease` when it is pending, or uploading under a lease that
    /// ran out (or is the runner's own). nil: someone else holds it, it ended, or it waits for its group.
    func claim(_ id: String, runner: String, lease: Duration, at now: Date = Date()) async throws(ServiceError) -> PhotoJob? {
        try await database.write { db in
            var query = db.select().columns("*").from("photoJob").where("id", .equal, id)
            if database.kind == .postgres { query = query.for(.update) }
            guard let job = try await query.first(decoding: PhotoJob.self) else { return nil }
            return try await take(job, runner: runner, lease: lease, now: now, db)
        }
    }

    /// Takes the oldest runnable job nobody holds (PostgreSQL: skipping rows other runners are claiming
    /// at this moment), or nil when there is none.
    func claimNext(runner: String, lease: Duration, at now: Date = Date()) async throws(ServiceError) -> PhotoJob? {
        try await database.write { db in
            var query = claimable(db.select().columns("*").from("photoJob"), at: now).orderBy("createdAt").orderBy("id").limit(1)
            if database.kind == .postgres { query = query.lockingClause(SQLRaw("FOR UPDATE SKIP LOCKED")) }
            guard let job = try await query.first(decoding: PhotoJob.self) else { return nil }
            return try await take(job, runner: runner, lease: lease, now: now, db)
        }
    }

    private func take(_ job: PhotoJob, runner: String, lease: Duration, now: Date, _ db: any SQLDatabase) async throws -> PhotoJob? {
        guard job.waitsFor == nil, runs(job) else { return nil }
        switch job.state {
        case .pending:
            break
        case .uploading:
            let lapsed = (job.leaseExpiresAt ?? .distantPast) < now
            guard lapsed || job.leaseOwner == runner else { return nil }
            if lapsed, let previous = job.leaseOwner {
                // The previous runner vanished: its holding ends here.
                try await db.update("photoJobRun").set("endedAt", to: now).set("outcome", to: "lease expired")
                    .where("job", .equal, job.id).where("runner", .equal, previous).where("endedAt", .is, SQLLiteral.null).run()
            }
        default:
            return nil
        }
        var job = job
        job.state = .uploading
        job.leaseOwner = runner
        job.leaseExpiresAt = now + lease.timeInterval
        job.attempts += 1
        job.updatedAt = now
        try await db.update("photoJob")
            .set("state", to: job.state.rawValue).set("leaseOwner", to: runner).set("leaseExpiresAt", to: job.leaseExpiresAt)
            .set("attempts", to: job.attempts).set("updatedAt", to: now)
            .where("id", .equal, job.id).run()
        try await db.insert(into: "photoJobRun").columns("job", "runner", "startedAt").values(SQLBind(job.id), SQLBind(runner), SQLBind(now)).run()
        if recordsEffects { try await Self.mirror(job.kind, subject: job.subject, state: .uploading, error: nil, db) }
        return job
    }

    /// Extends the runner's leases on `ids`; returns the ids it no longer holds (taken over, or ended).
    func renew(_ ids: [String], runner: String, lease: Duration, at now: Date = Date()) async throws(ServiceError) -> Set<String> {
        guard !ids.isEmpty else { return [] }
        let renewed = try await database.write { db in
            try await db.update("photoJob").set("leaseExpiresAt", to: now + lease.timeInterval)
                .where("id", .in, ids).where("leaseOwner", .equal, runner).where("state", .equal, PhotoState.uploading.rawValue)
                .returning("id").all(decodingColumn: "id", as: String.self)
        }
        return Set(ids).subtracting(renewed)
    }

    /// Saves what the runner learned, if it still holds the job.
    func saveProgress(_ id: String, runner: String, preparedPath: String? = nil, location: String? = nil, uploadedBytes: Int64? = nil)
        async throws(ServiceError)
    {
        try await database.write { db in
            var update = db.update("photoJob").set("updatedAt", to: Date())
            if let preparedPath { update = update.set("preparedPath", to: preparedPath) }
            if let location { update = update.set("uploadLocation", to: location) }
            if let uploadedBytes { update = update.set("uploadedBytes", to: uploadedBytes) }
            try await update.where("id", .equal, id).where("leaseOwner", .equal, runner).run()
        }
    }

    // MARK: - Ending

    /// The upload finished: the URL and its effect (group photo, profile picture, album photo: what the
    /// intake records for any stored photo, with `content`, what readers are told of its bytes) in one
    /// transaction, the lease released. Returns the objects it replaced (to be deleted), and false when the
    /// runner had lost the job meanwhile (nothing recorded). `content` is needed only where the effects are
    /// recorded (`recordsEffects`).
    func complete(_ job: PhotoJob, runner: String, url: String, content: StoredPhotos.Content?, at now: Date = Date()) async throws(ServiceError) -> (
        recorded: Bool, replaced: [String]
    ) {
        try await database.write { db in
            var query = db.select().columns("*").from("photoJob").where("id", .equal, job.id)
            if database.kind == .postgres { query = query.for(.update) }
            guard let current = try await query.first(decoding: PhotoJob.self), current.leaseOwner == runner, current.state == .uploading
            else { return (false, []) }
            var replaced: [String] = []
            if recordsEffects {
                guard let content else { throw ServiceError.storage("the prepared photo of job \(job.id) cannot be read") }
                replaced = try await PhotoIntake.record(
                    caller: job.caller, displayName: nil, path: try StoragePath(key: job.key),
                    stored: .init(photo: .init(location: url, content: content), thumbnails: []), at: now, db)
            }
            var update = db.update("photoJob").set("state", to: PhotoState.done.rawValue).set("url", to: url)
                .set("error", to: SQLLiteral.null).set("leaseOwner", to: SQLLiteral.null).set("leaseExpiresAt", to: SQLLiteral.null)
                .set("updatedAt", to: now)
            if let content { update = update.set("uploadedBytes", to: content.size) }
            try await update.where("id", .equal, job.id).run()
            try await Self.endRun(job.id, runner: runner, outcome: "done", now: now, db)
            return (true, replaced)
        }
    }

    /// Records a non-successful end (pending again, failed, cancelled) and releases the lease. With a
    /// `runner`, only while that runner holds the job.
    func end(_ job: PhotoJob, runner: String?, state: PhotoState, error: String?, at now: Date = Date()) async throws(ServiceError) {
        try await database.write { db in
            var update = db.update("photoJob").set("state", to: state.rawValue).set("error", to: bindOrNull(error))
                .set("leaseOwner", to: SQLLiteral.null).set("leaseExpiresAt", to: SQLLiteral.null).set("updatedAt", to: now)
                .where("id", .equal, job.id)
            if let runner { update = update.where("leaseOwner", .equal, runner) }
            let ended = try await update.returning("id").all()
            guard !ended.isEmpty else { return }
            if let runner { try await Self.endRun(job.id, runner: runner, outcome: state.rawValue, now: now, db) }
            if recordsEffects { try await Self.mirror(job.kind, subject: job.subject, state: state, error: error, db) }
        }
    }

    /// Makes a failed, cancelled or pending job pending again (`retry`).
    func reopen(_ job: PhotoJob) async throws(ServiceError) {
        try await database.write { db in
            try await db.update("photoJob").set("state", to: PhotoState.pending.rawValue).set("error", to: SQLLiteral.null)
                .set("updatedAt", to: Date()).where("id", .equal, job.id).where("state", .notEqual, PhotoState.uploading.rawValue).run()
            if recordsEffects { try await Self.mirror(job.kind, subject: job.subject, state: .pending, error: nil, db) }
        }
    }

    private static func endRun(_ id: String, runner: String, outcome: String, now: Date, _ db: any SQLDatabase) async throws {
        try await db.update("photoJobRun").set("endedAt", to: now).set("outcome", to: outcome)
            .where("job", .equal, id).where("runner", .equal, runner).where("endedAt", .is, SQLLiteral.null).run()
    }

    /// Shows an unfinished job's state on what it belongs to: the group's photo state, the album photo's
    /// state. (A finished one is recorded by the intake, with its URL.)
    static func mirror(_ kind: PhotoJob.Kind, subject: String, state: PhotoState, error: String?, _ db: any SQLDatabase) async throws {
        switch kind {
        case .group:
            try await db.update("chatGroup").set("photoState", to: state.rawValue).set("photoError", to: bindOrNull(error))
                .set("updatedAt", to: Date()).where("id", .equal, subject).run()
        case .album:
            try await db.update("albumPhoto").set("state", to: state.rawValue).where("id", .equal, subject).run()
        case .profile:
            break
        }
    }

    // MARK: - Jobs waiting for a group (the offline-first client)

    /// The group's creation reached the server: its photo may go.
    static func release(waitingFor group: String, _ db: any SQLDatabase) async throws {
        try await db.update("photoJob").set("waitsFor", to: SQLLiteral.null).set("updatedAt", to: Date()).where("waitsFor", .equal, group).run()
    }

    /// The server refused the group: its photo fails with the same reason.
    static func fail(waitingFor group: String, reason: String, _ db: any SQLDatabase) async throws {
        try await db.update("photoJob").set("state", to: PhotoState.failed.rawValue).set("error", to: reason).set("updatedAt", to: Date())
            .where("waitsFor", .equal, group).run()
    }

    static func delete(_ id: String, _ db: any SQLDatabase) async throws {
        try await db.delete(from: "photoJob").where("id", .equal, id).run()
    }

    /// The job of an album photo, if any.
    func albumJob(photo: String) async throws(ServiceError) -> String? {
        try await database.read { db in
            try await db.select().column("id").from("photoJob").where("kind", .equal, PhotoJob.Kind.album.rawValue).where("subject", .equal, photo)
                .first(decodingColumn: "id", as: String.self)
        }
    }

    static func deleteAlbumJobs(photo: String, _ db: any SQLDatabase) async throws {
        try await db.delete(from: "photoJob").where("kind", .equal, PhotoJob.Kind.album.rawValue).where("subject", .equal, photo).run()
    }
}

extension Duration {
    package var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
