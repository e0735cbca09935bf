import Foundation
import GRDB
import PhotoPrep
public import PhotoUpload
import PhotoFiles
import Synchronization

/// What happens to one photo on its way to storage. Every stream ends with exactly one terminal
/// event: `finished`, `pending` (the destination is unreachable; `sync()` tries again), `failed` or
/// `cancelled`.
public enum PhotoJobEvent: Sendable, Equatable {
    case preparing
    /// Bytes the destination acknowledged.
    case progress(UploadProgress)
    /// The upload failed transiently and is tried again after `retry.delay`.
    case retrying(UploadRetry)
    case finished(url: String)
    case pending(reason: String)
    case failed(reason: String)
    case cancelled

    public var isTerminal: Bool {
        switch self {
        case .preparing, .progress, .retrying: false
        case .finished, .pending, .failed, .cancelled: true
        }
    }
}

/// Runs the photo jobs: prepare (once; retries re-use the prepared bytes), check the storage rules,
/// upload resumably, then record the result and its effect (group photo, profile picture, album
/// photo) in one transaction. Jobs live in SQLite, so a new process continues them with `sync()`;
/// a job is claimed by one process at a time (`host:pid` + a lease), so it is uploaded once.
public final class PhotoJobs: Sendable {
    let database: AppDatabase
    let uploader: Uploader
    let staging: URL
    /// The `Authorization` header for a user's uploads (nil: none).
    let credentials: @Sendable (String) -> String?
    /// The photo's URL once its upload finished at `location` (a server that stores the photo
    /// elsewhere says where); nil: the upload's location is the photo's URL.
    let photoURL: (@Sendable (PhotoJob, String) async -> String)?
    let owner: String
    /// A claim not renewed for this long is taken over (its process is gone or stuck).
    static let lease: TimeInterval = 60
    private let running = Mutex<[String: Running]>([:])

    private struct Running {
        var task: Task<Void, Never>?
        var upload: UploadTask?
        var cancelRequested = false
        var subscribers: [UUID: AsyncStream<PhotoJobEvent>.Continuation] = [:]
    }

    init(
        database: AppDatabase, uploader: Uploader, staging: URL, credentials: @escaping @Sendable (String) -> String?,
        photoURL: (@Sendable (PhotoJob, String) async -> String)? = nil
    ) {
        self.database = database
        self.uploader = uploader
        self.staging = staging
        self.credentials = credentials
        self.photoURL = photoURL
        owner = "\(ProcessInfo.processInfo.hostName):\(getpid())"
    }

    // MARK: - Observing and controlling

    /// The job's events from now on; a job that is not running yields its outcome and ends.
    public func events(_ id: String) -> AsyncStream<PhotoJobEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: PhotoJobEvent.self, bufferingPolicy: .unbounded)
        let subscribed = running.withLock { jobs -> Bool in
            guard jobs[id] != nil else { return false }
            jobs[id]!.subscribers[UUID()] = continuation
            return true
        }
        if !subscribed {
            if let job = try? record(id) { continuation.yield(Self.outcome(of: job)) }
            continuation.finish()
        }
        return stream
    }

    /// Waits until the job is not running here any more; returns its record.
    @discardableResult
    public func wait(_ id: String) async throws(ServiceError) -> PhotoJob {
        if let task = running.withLock({ $0[id]?.task }) { await task.value }
        return try record(id)
    }

    /// Stops the job: its partial upload is deleted; the photo is marked cancelled (`retry` restarts it).
    public func cancel(_ id: String) async throws(ServiceError) {
        let upload = running.withLock { jobs -> UploadTask?? in
            guard jobs[id] != nil else { return nil }
            jobs[id]!.cancelRequested = true
            if jobs[id]!.upload == nil { jobs[id]!.task?.cancel() }
            return .some(jobs[id]!.upload)
        }
        if let upload {
            upload?.cancel()
            try await wait(id)
            return
        }
        let job = try record(id)
        guard [.pending, .failed].contains(job.state) else { return }
        try finish(job, state: .cancelled, error: nil, url: nil)
    }

    /// Starts a failed, cancelled or pending job again, re-using its prepared bytes and its resumable upload.
    public func retry(_ id: String) throws(ServiceError) {
        let job = try record(id)
        guard job.state != .done else { throw .invalidState("the photo of job \(id) is already uploaded") }
        if running.withLock({ $0[id] != nil }) { return }
        try database.write { db in
            try db.execute(sql: "UPDATE photoJob SET state = 'pending', error = NULL, updatedAt = ? WHERE id = ?", arguments: [Date(), id])
            try Self.mirror(job.kind, subject: job.subject, state: .pending, error: nil, url: nil, db: db)
        }
        start(id)
    }

    /// Runs every unfinished job (pending, or uploading in a process that is gone), also those a
    /// previous process left, and waits for them. Returns the jobs' states afterwards.
    @discardableResult
    public func sync() async -> [PhotoJob] {
        for stale in (try? staleObjects()) ?? [] { await deleteStale(stale.url, caller: stale.caller, attempts: 1) }
        let ids = (try? database.read { db in
            try String.fetchAll(
                db, sql: "SELECT id FROM photoJob WHERE state IN ('pending', 'uploading') AND waitsFor IS NULL ORDER BY createdAt")
        }) ?? []
        for id in ids { start(id) }
        var jobs: [PhotoJob] = []
        for id in ids {
            if let job = try? await wait(id) { jobs.append(job) }
        }
        return jobs
    }

    /// Calls `sync()` every `interval` until the returned task is cancelled.
    public func startBackgroundSync(every interval: Duration) -> Task<Void, Never> {
        Task { [self] in
            while !Task.isCancelled {
                await sync()
                try? await Task.sleep(for: interval)
            }
        }
    }

    /// The jobs that are not done.
    public func unfinished() throws(ServiceError) -> [PhotoJob] {
        try database.read { db in try PhotoJob.filter(sql: "state != 'done'").order(sql: "createdAt").fetchAll(db) }
    }

    // MARK: - Running

    /// Stages the caller's photo as a new job, records it in one transaction with `also` (what it
    /// belongs to), and starts it. Nothing is kept when the transaction fails.
    func submit(
        kind: PhotoJob.Kind, caller: String, subject: String, path: StoragePath, preset: PrepareOptions.Preset, photo: PhotoInput,
        also: (Database) throws -> Void = { _ in }
    ) throws(ServiceError) -> String {
        let job = try newJob(kind: kind, caller: caller, subject: subject, path: path, preset: preset, original: try photo.load(), staging: staging)
        do {
            try database.write { db in
                try also(db)
                try job.insert(db)
            }
        } catch {
            try? FileManager.default.removeItem(atPath: job.originalPath)
            throw error
        }
        start(job.id)
        return job.id
    }

    /// Starts the job in the background unless it runs here already.
    func start(_ id: String) {
        let started = running.withLock { jobs -> Bool in
            guard jobs[id] == nil else { return false }
            jobs[id] = Running()
            return true
        }
        guard started else { return }
        let task = Task.detached { [self] in
            // Not ours to run (another process holds it, or it ended already): its recorded state.
            let outcome = await run(id) ?? (try? record(id)).map(Self.outcome(of:))
            let subscribers = running.withLock { jobs in jobs.removeValue(forKey: id)?.subscribers.values.map { $0 } ?? [] }
            for subscriber in subscribers {
                if let outcome { subscriber.yield(outcome) }
                subscriber.finish()
            }
        }
        running.withLock { $0[id]?.task = task }
    }

    private func emit(_ id: String, _ event: PhotoJobEvent) {
        for subscriber in running.withLock({ $0[id]?.subscribers.values.map { $0 } ?? [] }) { subscriber.yield(event) }
    }

    /// Claims, prepares, uploads and records one job; returns the terminal event (nil: not ours to run).
    private func run(_ id: String) async -> PhotoJobEvent? {
        guard var job = try? claim(id) else { return nil }
        do {
            if job.preparedPath == nil {
                emit(id, .preparing)
                job.preparedPath = try prepare(job)
                try database.write { db in try job.update(db) }
            }
            // The original (EXIF, GPS, serials) is not kept a moment longer than needed: retries use
            // the prepared bytes, which carry no metadata.
            try? FileManager.default.removeItem(atPath: job.originalPath)
        } catch {
            if running.withLock({ $0[id]?.cancelRequested ?? false }) {
                try? finish(job, state: .cancelled, error: nil, url: nil)
                return .cancelled
            }
            try? finish(job, state: .failed, error: error.description, url: nil)
            if case .unsupportedPhoto = error { try? FileManager.default.removeItem(atPath: job.originalPath) }
            return .failed(reason: error.description)
        }
        let upload = await uploader.upload(
            .file(job.preparedPath!),
            request: UploadRequest(key: job.key, contentType: "image/jpeg", metadata: ["job": job.id], authorization: credentials(job.caller)))
        let cancelNow = running.withLock { jobs -> Bool in
            jobs[id]?.upload = upload
            return jobs[id]?.cancelRequested ?? false
        }
        if cancelNow { upload.cancel() }
        // Renew the claim while the upload runs, progress or not (backoff can last minutes).
        let heartbeat = Task { [self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(Self.lease / 6))
                try? database.write { db in
                    try db.execute(sql: "UPDATE photoJob SET claimedAt = ? WHERE id = ? AND claimedBy = ?", arguments: [Date(), id, owner])
                }
            }
        }
        defer { heartbeat.cancel() }
        var lastBeat = Date.distantPast
        for await event in upload.events {
            switch event {
            case .started(let location):
                // Where the upload is, as the uploader says (its journal is its own business).
                try? database.write { db in
                    try db.execute(
                        sql: "UPDATE photoJob SET uploadLocation = ? WHERE id = ? AND claimedBy = ?", arguments: [location, id, owner])
                }
            case .progress(let progress):
                emit(id, .progress(progress))
                // The bytes the destination acknowledged, at most once a second.
                guard progress.acknowledged > 0, Date().timeIntervalSince(lastBeat) >= 1 || progress.acknowledged == progress.total else { break }
                lastBeat = Date()
                try? database.write { db in
                    try db.execute(
                        sql: "UPDATE photoJob SET uploadedBytes = ? WHERE id = ? AND claimedBy = ?", arguments: [progress.acknowledged, id, owner])
                }
            case .finished(let location):
                let url = await photoURL?(job, location) ?? location
                do {
                    let replaced = try complete(job, url: url)
                    uploader.journal?.remove(destination: uploader.destination, key: job.key)
                    // The profile points at the new picture already: deleting the old one leaves no broken window.
                    if let replaced { await deleteStale(replaced, caller: job.caller) }
                    return .finished(url: url)
                } catch {
                    try? finish(job, state: .pending, error: error.description, url: nil)
                    return .pending(reason: error.description)
                }
            case .failed(let error):
                // The destination stayed unreachable (or kept failing) for the whole retry budget:
                // keep the job pending for `sync()`. Anything else needs a decision: failed.
                let state: PhotoState = error.isTransient ? .pending : .failed
                try? finish(job, state: state, error: error.description, url: nil)
                return state == .pending ? .pending(reason: error.description) : .failed(reason: error.description)
            case .cancelled:
                try? finish(job, state: .cancelled, error: nil, url: nil)
                return .cancelled
            case .retrying(let retry):
                emit(id, .retrying(retry))
            case .paused:
                break
            }
        }
        return nil
    }

    /// Takes the job for this process when it is pending, or uploading under a claim that lapsed
    /// (its process died: same host and no such pid, or no heartbeat within the lease).
    private func claim(_ id: String) throws(ServiceError) -> PhotoJob? {
        try database.write { db -> PhotoJob? in
            guard var job = try PhotoJob.fetchOne(db, key: id), job.waitsFor == nil else { return nil }
            switch job.state {
            case .pending:
                break
            case .uploading:
                guard job.claimedBy == owner || claimLapsed(job) else { return nil }
            default:
                return nil
            }
            job.state = .uploading
            job.claimedBy = owner
            job.claimedAt = Date()
            job.attempts += 1
            job.updatedAt = Date()
            try job.update(db)
            try Self.mirror(job.kind, subject: job.subject, state: .uploading, error: nil, url: nil, db: db)
            return job
        }
    }

    private func claimLapsed(_ job: PhotoJob) -> Bool {
        guard let claimedBy = job.claimedBy, let claimedAt = job.claimedAt else { return true }
        if Date().timeIntervalSince(claimedAt) > Self.lease { return true }
        let parts = claimedBy.split(separator: ":")
        guard parts.count == 2, String(parts[0]) == ProcessInfo.processInfo.hostName, let pid = Int32(parts[1]) else { return false }
        return kill(pid, 0) != 0 && errno == ESRCH
    }

    /// Prepares the staged original with the job's preset, checks the storage rules and stages the
    /// JPEG (written atomically); returns its path.
    private func prepare(_ job: PhotoJob) throws(ServiceError) -> String {
        guard let preset = PrepareOptions.Preset(rawValue: job.preset) else { throw .invalidState("unknown preset \(job.preset)") }
        let prepared: PreparedPhoto
        do {
            prepared = try PhotoPipeline(preset: preset).prepare(contentsOf: job.originalPath)
        } catch {
            throw .unsupportedPhoto("\(error)")
        }
        try StorageRules.checkUpload(prepared.jpeg, to: try StoragePath(key: job.key))
        let path = staging.appendingPathComponent("\(job.id).jpg").path
        do { try AtomicFile.write(prepared.jpeg, to: path, permissions: 0o600) } catch { throw .storage(error.message) }
        return path
    }

    /// The upload finished: record the URL and its effect in one transaction, then tidy up. Returns the
    /// profile picture it replaced (to be deleted).
    private func complete(_ job: PhotoJob, url: String) throws(ServiceError) -> String? {
        let replaced: String? = try database.write { db -> String? in
            var replaced: String?
            if job.kind == .profile, let user = try User.fetchOne(db, key: job.caller), let old = user.profilePhotoURL, old != url {
                replaced = old
            }
            let size = job.preparedPath.flatMap { (try? FileManager.default.attributesOfItem(atPath: $0))?[.size] as? Int64 }
            try db.execute(
                sql: """
                    UPDATE photoJob SET state = 'done', url = ?, error = NULL, claimedBy = NULL, updatedAt = ?,
                    uploadedBytes = coalesce(?, uploadedBytes) WHERE id = ?
                    """,
                arguments: [url, Date(), size, job.id])
            try Self.mirror(job.kind, subject: job.subject, state: .done, error: nil, url: url, db: db)
            if job.kind == .profile {
                try db.execute(
                    sql: "UPDATE user SET profilePhotoURL = ?, profilePhotoKey = ? WHERE id = ?", arguments: [url, job.key, job.caller])
            }
            return replaced
        }
        try? FileManager.default.removeItem(atPath: job.originalPath)
        if let prepared = job.preparedPath { try? FileManager.default.removeItem(atPath: prepared) }
        return replaced
    }

    /// Deletes an object that should be gone, trying three times; one that still cannot be deleted is
    /// recorded (`staleObjects()`), and `sync()` tries again.
    func deleteStale(_ url: String, caller: String, attempts: Int = 3) async {
        var failure = ""
        for attempt in 1...attempts {
            do {
                try await uploader.delete(url, authorization: credentials(caller))
                _ = try? database.write { db in try StaleObject.deleteOne(db, key: url) }
                return
            } catch {
                failure = error.description
                if attempt < attempts { try? await Task.sleep(for: .milliseconds(200 * attempt)) }
            }
        }
        try? database.write { db in
            let tried = try StaleObject.fetchOne(db, key: url)?.attempts ?? 0
            try StaleObject(url: url, caller: caller, error: failure, attempts: tried + attempts, updatedAt: Date()).save(db)
        }
    }

    /// Objects that should be gone but could not be deleted yet, with why.
    public func staleObjects() throws(ServiceError) -> [StaleObject] {
        try database.read { db in try StaleObject.order(sql: "updatedAt").fetchAll(db) }
    }

    /// Records a non-successful end (or a cancellation) and releases the claim.
    private func finish(_ job: PhotoJob, state: PhotoState, error: String?, url: String?) throws(ServiceError) {
        try database.write { db in
            try db.execute(
                sql: "UPDATE photoJob SET state = ?, error = ?, claimedBy = NULL, updatedAt = ? WHERE id = ?",
                arguments: [state, error, Date(), job.id])
            try Self.mirror(job.kind, subject: job.subject, state: state, error: error, url: url, db: db)
        }
    }

    /// Shows the job's state on what it belongs to: the group's photo state, the album photo's state.
    static func mirror(_ kind: PhotoJob.Kind, subject: String, state: PhotoState, error: String?, url: String?, db: Database) throws {
        switch kind {
        case .group:
            try db.execute(
                sql: "UPDATE chatGroup SET photoState = ?, photoError = ?, photoURL = coalesce(?, photoURL), updatedAt = ? WHERE id = ?",
                arguments: [state, error, url, Date(), subject])
        case .album:
            try db.execute(sql: "UPDATE albumPhoto SET state = ?, url = coalesce(?, url) WHERE id = ?", arguments: [state, url, subject])
        case .profile:
            break
        }
    }

    /// The terminal event that describes the job's recorded state.
    public static func outcome(of job: PhotoJob) -> PhotoJobEvent {
        switch job.state {
        case .done: .finished(url: job.url ?? "")
        case .failed: .failed(reason: job.error ?? "failed")
        case .cancelled: .cancelled
        case .uploading: .pending(reason: "being uploaded by \(job.claimedBy ?? "another process")")
        case .pending, .none:
            .pending(reason: job.error ?? job.waitsFor.map { "waiting until the server has group \($0)" } ?? "waiting to be uploaded")
        }
    }

    func record(_ id: String) throws(ServiceError) -> PhotoJob {
        guard let job = try database.read({ db in try PhotoJob.fetchOne(db, key: id) }) else { throw .notFound("photo job \(id)") }
        return job
    }
}
