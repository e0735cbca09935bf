import Foundation
import PhotoUpload
import PhotoFiles
import NIOPosix
import Synchronization

/// Runs the photo jobs: prepare (once; retries re-use the prepared bytes), check the storage rules,
/// upload resumably, then record the result and its effect (group photo, profile picture, album
/// photo) in one transaction. The jobs live in the database (`JobStore`): a runner holds one under a
/// lease it renews while it works, so it is uploaded by one runner at a time — on this machine or any
/// other sharing the database — and a job whose runner vanished is taken over once its lease ran out.
/// What a job does is `PhotoJobMachine`'s decision; this does the I/O.
public final class PhotoJobs: Sendable {
    public let store: JobStore
    /// Preparing, storing, recording and deleting replaced objects: the steps every photo goes through.
    let intake: PhotoIntake
    let staging: URL
    /// The photo's URL once its upload finished at `location` (a server that stores the photo
    /// elsewhere says where); nil: the upload's location is the photo's URL.
    let photoURL: (@Sendable (PhotoJob, String) async -> String)?
    /// This runner's id in leases and runs: random, not a process or a host.
    public let runner = "runner-" + randomUUID()
    /// How long a claim lasts unless renewed (renewed every third of it while the job runs).
    public let lease: Duration
    private let running = Mutex<[String: Running]>([:])
    private let stopping = Mutex(false)

    /// A job running here: who listens, and how to reach its upload.
    private struct Running {
        var task: Task<Void, Never>?
        var upload: UploadTask?
        var cancelRequested = false
        var stopRequested = false
        var leaseLost = false
        var subscribers: [UUID: AsyncStream<PhotoJobEvent>.Continuation] = [:]
    }

    init(store: JobStore, intake: PhotoIntake, staging: URL, lease: Duration, photoURL: (@Sendable (PhotoJob, String) async -> String)? = nil) {
        self.store = store
        self.intake = intake
        self.staging = staging
        self.lease = lease
        self.photoURL = photoURL
    }

    // MARK: - Observing and controlling

    /// The job's events from now on; a job that is not running here yields its recorded outcome and ends.
    public func events(_ id: String) async -> AsyncStream<PhotoJobEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: PhotoJobEvent.self, bufferingPolicy: .unbounded)
        let subscribed = running.withLock { jobs -> Bool in
            guard jobs[id] != nil else { return false }
            jobs[id]!.subscribers[UUID()] = continuation
            return true
        }
        if !subscribed {
            if let job = try? await store.job(id) { continuation.yield(Self.outcome(of: job)) }
            continuation.finish()
        }
        return stream
    }

    /// Waits until the job is not running here any more; returns its record.
    @discardableResult
    public func wait(_ id: String) async throws(ServiceError) -> PhotoJob {
        if let task = running.withLock({ $0[id]?.task }) { await task.value }
        return try await record(id)
    }

    /// Stops the job: its partial upload is deleted; the photo is marked cancelled (`retry` restarts it).
    public func cancel(_ id: String) async throws(ServiceError) {
        let running = running.withLock { jobs -> (task: Task<Void, Never>?, upload: UploadTask?)? in
            guard jobs[id] != nil else { return nil }
            jobs[id]!.cancelRequested = true
            return (jobs[id]!.task, jobs[id]!.upload)
        }
        if let running {
            running.upload?.cancel()
            await running.task?.value
            return
        }
        let job = try await record(id)
        guard [.pending, .failed].contains(job.state) else { return }
        try await store.end(job, runner: nil, state: .cancelled, error: nil)
    }

    /// Starts a failed, cancelled or pending job again, re-using its prepared bytes and its resumable upload.
    public func retry(_ id: String) async throws(ServiceError) {
        let job = try await record(id)
        guard job.state != .done else { throw .invalidState("the photo of job \(id) is already uploaded") }
        if running.withLock({ $0[id] != nil }) { return }
        try await store.reopen(job)
        start(id)
    }

    /// Runs every unfinished job (pending, or uploading under a lease that ran out), also those a
    /// previous process left, and waits for them; a job another runner holds is waited for until it
    /// ends or its lease runs out (then it is taken over). Returns the jobs' states afterwards.
    @discardableResult
    public func sync() async -> [PhotoJob] {
        await intake.deleteStaleObjects()
        var seen: [String] = []
        while !stopping.withLock({ $0 }) {
            // Runnable ones, and those already running here (a submission, a group just released).
            let here = running.withLock { Array($0.keys) }
            let ids = (((try? await store.runnable()) ?? []) + here.sorted()).reduce(into: [String]()) { ids, id in
                if !seen.contains(id), !ids.contains(id) { ids.append(id) }
            }
            let held = ((try? await store.heldByOthers(than: runner)) ?? []).filter { !seen.contains($0.id) }
            if ids.isEmpty && held.isEmpty { break }
            await withTaskGroup(of: Void.self) { group in
                for id in ids {
                    // One started here already (a submission) is waited for; the others run as children.
                    let runsHere = running.withLock { $0[id] != nil }
                    group.addTask { [self] in
                        if runsHere { _ = try? await wait(id) } else { await runHere(id) }
                    }
                }
            }
            seen += ids
            if ids.isEmpty, let soonest = held.map(\.until).min() {
                // Held elsewhere: look again when the first lease would run out (or sooner, if it ends).
                let delay = min(max(soonest.timeIntervalSinceNow, 0.05), lease.timeInterval / 3)
                try? await Task.sleep(for: .milliseconds(Int(delay * 1000) + 10))
                if Task.isCancelled { break }
            }
        }
        var jobs: [PhotoJob] = []
        for id in seen {
            if let job = try? await store.job(id) { jobs.append(job) }
        }
        return jobs
    }

    // MARK: - Running

    /// Runs the job in a task of its own unless it runs here already. The task belongs to this object:
    /// `wait`, `cancel` and `stopAll` reach it, and its outcome is recorded and sent to every subscriber.
    func start(_ id: String) {
        guard !stopping.withLock({ $0 }) else { return }
        let started = running.withLock { jobs -> Bool in
            guard jobs[id] == nil else { return false }
            jobs[id] = Running()
            return true
        }
        guard started else { return }
        let task = Task { [self] in await runHere(id) }
        running.withLock { $0[id]?.task = task }
    }

    /// Runs the job in the current task (registered so that `events`, `cancel` and `stopAll` reach it).
    func runHere(_ id: String) async {
        running.withLock { jobs in if jobs[id] == nil { jobs[id] = Running() } }
        // Not ours to run (another runner holds it, or it ended already): its recorded state.
        var outcome = await run(id)
        if outcome == nil { outcome = (try? await record(id)).map(Self.outcome(of:)) }
        let subscribers = running.withLock { jobs in jobs.removeValue(forKey: id)?.subscribers.values.map { $0 } ?? [] }
        for subscriber in subscribers {
            if let outcome { subscriber.yield(outcome) }
            subscriber.finish()
        }
    }

    /// Graceful shutdown: no job starts any more; every job running here pauses its upload and is left
    /// pending, to be resumed by any runner where it stopped. Returns at once; the jobs end shortly.
    public func requestStop() {
        stopping.withLock { $0 = true }
        let uploads = running.withLock { jobs -> [UploadTask] in
            for id in jobs.keys { jobs[id]!.stopRequested = true }
            return jobs.values.compactMap(\.upload)
        }
        for upload in uploads { upload.pause() }
    }

    private func emit(_ id: String, _ event: PhotoJobEvent) {
        for subscriber in running.withLock({ $0[id]?.subscribers.values.map { $0 } ?? [] }) { subscriber.yield(event) }
    }

    /// Claims the job and drives it through `PhotoJobMachine`; returns the terminal event (nil: not ours to run).
    private func run(_ id: String) async -> PhotoJobEvent? {
        guard let claimed = try? await store.claim(id, runner: runner, lease: lease) else { return nil }
        var job = claimed
        var machine = PhotoJobMachine()
        // The lease is renewed while the job runs, progress or not (backoff can last minutes). When
        // another runner has it (this one stalled past its lease), the upload pauses and the job is let go.
        let store = self.store, runner = self.runner, lease = self.lease
        return await LeaseRenewal.holding(for: lease) {
            guard let lost = try? await store.renew([id], runner: runner, lease: lease) else { return true }
            return !lost.contains(id)
        } lost: { [self] in
            let upload = running.withLock { jobs in
                jobs[id]?.leaseLost = true
                return jobs[id]?.upload
            }
            upload?.pause()
        } _: { () -> PhotoJobEvent? in
            var pending = machine.handle(.claimed(preparedPath: job.preparedPath))
            var upload: UploadTask?
            var uploadEvents: AsyncStream<UploadEvent>.AsyncIterator?
            var told = (cancel: false, stop: false, lost: false)
            while true {
                // What was asked from outside (cancel, stop, the lease lost) goes to the machine once each.
                let asked = running.withLock { jobs in
                    (cancel: jobs[id]?.cancelRequested ?? false, stop: jobs[id]?.stopRequested ?? false, lost: jobs[id]?.leaseLost ?? false)
                }
                if asked.cancel, !told.cancel { told.cancel = true; pending += machine.handle(.cancelRequested) }
                if asked.stop, !told.stop { told.stop = true; pending += machine.handle(.stopRequested) }
                if asked.lost, !told.lost { told.lost = true; pending += machine.handle(.leaseLost) }
                if pending.isEmpty {
                    guard var iterator = uploadEvents, let event = await iterator.next() else { return nil }
                    uploadEvents = iterator
                    pending = machine.handle(.upload(event, at: Date()))
                    continue
                }
                let action = pending.removeFirst()
                switch action {
                case .emit(let event):
                    emit(id, event)
                case .prepare:
                    do throws(ServiceError) {
                        let path = try await prepare(job)
                        job.preparedPath = path
                        pending += machine.handle(.prepared(path: path))
                    } catch {
                        let unsupported = if case .unsupportedPhoto = error { true } else { false }
                        pending += machine.handle(.prepareFailed(reason: error.description, unsupported: unsupported))
                    }
                case .savePrepared(let path):
                    try? await store.saveProgress(id, runner: runner, preparedPath: path)
                case .deleteOriginal:
                    try? FileManager.default.removeItem(atPath: job.originalPath)
                case .startUpload(let path):
                    switch intake.destination {
                    case .storage(let storage):
                        uploadEvents = await Self.put(path, key: job.key, in: storage).makeAsyncIterator()
                    case .uploadServer(let uploader):
                        let task = await uploader.upload(
                            .file(path),
                            request: UploadRequest(
                                key: job.key, contentType: "image/jpeg", metadata: ["job": job.id, "focus": job.focus].compactMapValues { $0 },
                                authorization: intake.credentials(job.caller)))
                        upload = task
                        uploadEvents = task.events.makeAsyncIterator()
                        // A cancel or stop asked meanwhile reaches the upload through the machine (the loop's next turn).
                        running.withLock { $0[id]?.upload = task }
                    }
                case .saveLocation(let location):
                    // Where the upload is, as the uploader says (its journal is its own business).
                    try? await store.saveProgress(id, runner: runner, location: location)
                case .saveUploadedBytes(let bytes):
                    try? await store.saveProgress(id, runner: runner, uploadedBytes: bytes)
                case .cancelUpload:
                    upload?.cancel()
                case .pauseUpload:
                    upload?.pause()
                case .record(let location):
                    let url = await photoURL?(job, location) ?? location
                    // What readers are told of the bytes: only where this database records the photo (not a client's).
                    let content = store.recordsEffects
                        ? job.preparedPath.flatMap { FileManager.default.contents(atPath: $0) }.map { StoredPhotos.Content(of: [UInt8]($0)) } : nil
                    do {
                        let (recorded, replaced) = try await store.complete(job, runner: runner, url: url, content: content)
                        pending += machine.handle(recorded ? .recorded(url: url, replaced: replaced) : .notRecorded)
                    } catch {
                        pending += machine.handle(.recordFailed(reason: "\(error)"))
                    }
                case .forgetUpload:
                    if case .uploadServer(let uploader) = intake.destination { uploader.journal?.remove(destination: uploader.destination, key: job.key) }
                    try? FileManager.default.removeItem(atPath: job.originalPath)
                    if let prepared = job.preparedPath { try? FileManager.default.removeItem(atPath: prepared) }
                case .deleteReplaced(let url):
                    // The profile points at the new picture already: deleting the old one leaves no broken window.
                    await intake.deleteReplaced(url, caller: job.caller)
                case .end(let state, let error):
                    try? await store.end(job, runner: runner, state: state, error: error)
                case .finish(let event):
                    return event
                }
            }
        }
    }
}
