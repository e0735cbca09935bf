import Foundation
import Synchronization

/// Drives one upload: performs the state machine's actions with a transport, keeps the journal
/// and reports monotone progress.
final class UploadSession: Sendable {
    let transport: any UploadTransport
    let destination: String
    let request: UploadRequest
    let source: OpenSource
    let configuration: UploadConfiguration
    let journal: UploadJournal?
    private let machine: Mutex<UploadStateMachine>
    private let progress: Mutex<UploadProgress>
    /// When the destination will forget the unfinished upload, as it last said.
    private let expires = Mutex<Date?>(nil)
    /// How many times `run` started (more than once after `pause()` and `resume()`).
    private let runs = Mutex(0)
    /// An unfinished upload of other content (or an expired one) the journal had under this key: `run`
    /// deletes it first, awaiting the deletion (best effort: the server expires it otherwise).
    private let staleUpload: Mutex<String?>
    private let clock = ContinuousClock()
    private let started: ContinuousClock.Instant

    /// `started`: when the upload began (before the destination's discovery), so that the budgets
    /// count the whole wall time.
    init(transport: any UploadTransport, destination: String, request: UploadRequest, source: OpenSource,
         configuration: UploadConfiguration, journal: UploadJournal?, started: ContinuousClock.Instant = .now) {
        self.transport = transport
        self.destination = destination
        self.request = request
        self.source = source
        self.configuration = configuration
        self.journal = journal
        self.started = started
        var resumeAt: String?
        var sentBefore: Int64?
        var stale: String?
        if let journal, let entry = journal.entry(destination: destination, key: request.key) {
            let expired = entry.expires.map { $0 <= Date() } ?? false
            if entry.contentSHA256 == source.sha256 && entry.length == source.length && !expired {
                resumeAt = entry.location
                sentBefore = entry.mayHaveDelivered
                expires.withLock { $0 = entry.expires }
            } else {
                // An unfinished upload of other content under the same key, or one the destination has
                // forgotten by now: delete it (if it is still there), start afresh.
                stale = entry.location
                journal.remove(destination: destination, key: request.key)
            }
        }
        staleUpload = Mutex(stale)
        let fixed = transport.chunkSize(forLength: source.length)
        machine = Mutex(UploadStateMachine(
            length: source.length, chunkSize: fixed ?? configuration.chunkSize, maxChunkSize: fixed ?? configuration.maxChunkSize,
            maxRetryDuration: configuration.maxRetryDuration, firstContactDuration: configuration.firstContactDuration,
            maxRequestDuration: configuration.requestTimeout,
            backoff: Backoff(initial: configuration.initialBackoff, maximum: configuration.maxBackoff),
            createWithData: transport.acceptsDataOnCreate, resuming: resumeAt, sentBefore: sentBefore))
        progress = Mutex(UploadProgress(acknowledged: 0, sent: 0, total: source.length))
    }

    /// Runs until a terminal event, or until paused (then returns `.paused`).
    func run(emit: @escaping @Sendable (UploadEvent) -> Void, pausing: @escaping @Sendable () -> Bool) async -> UploadEvent {
        // A run after a pause gets its budgets afresh: the time paused was not time without progress.
        if runs.withLock({ $0 += 1; return $0 > 1 }) { machine.withLock { $0.resumed(now: elapsed) } }
        if let stale = staleUpload.withLock({ location in defer { location = nil }; return location }) {
            _ = await deletePartial(stale)
        }
        var announced: String?
        while true {
            if Task.isCancelled {
                if pausing() {
                    machine.withLock { $0.requery() }
                    return .paused(progress.withLock { $0 })
                }
                machine.withLock { $0.cancel() }
            }
            let action = machine.withLock { $0.next(now: elapsed) }
            switch action {
            case .create(let length, let firstChunk):
                let chunk: [UInt8]
                do {
                    chunk = try source.read(offset: 0, length: firstChunk)
                } catch {
                    return .failed(error)
                }
                await perform(throttling: chunk.count) { [self] () async throws(TransportFailure) in
                    let created = try await transport.create(length: length, firstChunk: chunk, request: request) { [self] count in
                        report(sent: Int64(count), emit: emit)
                    }
                    expires.withLock { $0 = created.expires ?? $0 }
                    return .created(location: created.location, offset: created.offset)
                }
            case .query(let location):
                await perform { [self] () async throws(TransportFailure) in
                    .offset(noting(try await transport.query(location, request: request)))
                }
            case .send(let location, let offset, let length):
                let chunk: [UInt8]
                do {
                    chunk = try source.read(offset: offset, length: length)
                } catch {
                    journal?.remove(destination: destination, key: request.key)
                    return .failed(error)
                }
                await perform(throttling: chunk.count) { [self] () async throws(TransportFailure) in
                    .offset(noting(try await transport.send(location, offset: offset, chunk: chunk, request: request) { [self] count in
                        report(sent: offset + Int64(count), emit: emit)
                    }))
                }
            case .wait(let delay):
                let (attempt, reason) = machine.withLock { ($0.failures, $0.lastFailure ?? "") }
                emit(.retrying(UploadRetry(attempt: attempt, reason: reason, delay: delay)))
                try? await Task.sleep(for: delay)
            case .terminate(let location):
                let done = await deletePartial(location)
                machine.withLock { $0.record(done ? .terminated : .status(500, "could not delete the partial upload"), now: elapsed, jitter: 0) }
            case .complete(let location):
                let length = source.length
                await perform { [self] () async throws(TransportFailure) in
                    .completed(url: try await transport.complete(location, length: length, request: request))
                }
            case .finish(let location):
                if configuration.keepsFinishedInJournal {
                    saveJournal(finished: true)
                } else {
                    journal?.remove(destination: destination, key: request.key)
                }
                return .finished(location: location)
            case .fail(let error):
                // Keep the journal after exhausted retries (a later run resumes). Errors retrying cannot fix
                // drop it, and the partial upload too (best effort: e.g. an S3 multipart upload would
                // otherwise be kept, and billed, until a lifecycle rule removes it).
                if !error.isTransient {
                    journal?.remove(destination: destination, key: request.key)
                    if let location = machine.withLock({ $0.location }) { _ = await deletePartial(location) }
                }
                return .failed(error)
            case .cancelled:
                journal?.remove(destination: destination, key: request.key)
                return .cancelled
            }
            switch action {
            case .create, .query, .send: saveJournal()
            default: break
            }
            // Where the upload is, once the destination has it (created, or a journalled one confirmed),
            // and before any byte it acknowledged is reported.
            let (location, acknowledged) = machine.withLock { ($0.location, $0.offset) }
            if let location, location != announced {
                announced = location
                emit(.started(location: location))
            }
            report(acknowledged: acknowledged, emit: emit)
        }
    }

    private var elapsed: Duration { clock.now - started }

    /// Deletes the partial upload at the destination. Runs even when this task is cancelled (the
    /// deletion must happen); a connection error or a 5xx is tried again (three attempts), so that a
    /// stale pooled connection does not leave the partial upload behind.
    private func deletePartial(_ location: String) async -> Bool {
        let transport = self.transport, request = self.request
        return await Task.detached { () -> Bool in
            for attempt in 1...3 {
                do throws(TransportFailure) {
                    try await transport.terminate(location, request: request)
                    return true
                } catch {
                    if case .status(let code, _) = error, code < 500 { return false }
                    if attempt < 3 { try? await Task.sleep(for: .milliseconds(100 * attempt)) }
                }
            }
            return false
        }.value
    }

    /// The acknowledged offset, keeping the expiry the destination announced.
    private func noting(_ acknowledgement: Acknowledgement) -> Int64 {
        if let date = acknowledgement.expires { expires.withLock { $0 = date } }
        return acknowledgement.offset
    }

    /// Performs one request and records its outcome. The request gets what is left of the retry
    /// budget (`UploadStateMachine.requestTimeout`); past it, it is abandoned as "no answer". With a
    /// rate limit, a request that sent `bytes` takes at least `bytes / maxBytesPerSecond` before its
    /// outcome is recorded, so the next chunk is sized to the limited rate.
    private func perform(
        throttling bytes: Int = 0, _ request: @escaping @Sendable () async throws(TransportFailure) -> UploadStateMachine.Outcome
    ) async {
        let before = clock.now
        let timeout = machine.withLock { $0.requestTimeout(now: elapsed) }
        let outcome: UploadStateMachine.Outcome
        switch await Self.within(timeout, request) {
        case .success(let answer): outcome = answer
        case .failure(.status(let code, let message)): outcome = .status(code, message)
        case .failure(.retryLater(let code, let message, let after)): outcome = .retryLater(code, message, after: after)
        case .failure(.transport(let message)): outcome = .transportError(message)
        case .failure(.violation(let message)): outcome = .violation(message)
        case .failure(.cancelled): return  // cancelled: the loop decides between pause and cancel
        }
        if let rate = configuration.maxBytesPerSecond, rate > 0, bytes > 0 {
            let due = Duration.seconds(Double(bytes) / Double(rate)) - (clock.now - before)
            if due > .zero { try? await Task.sleep(for: due) }
        }
        machine.withLock { $0.record(outcome, now: elapsed, jitter: Double.random(in: 0...1)) }
    }

    /// Runs `request`, abandoning it (cancelling its task) when it has not answered within `timeout`.
    /// Cancelling the caller cancels the request too and yields `.cancelled`.
    private static func within(
        _ timeout: Duration, _ request: @escaping @Sendable () async throws(TransportFailure) -> UploadStateMachine.Outcome
    ) async -> Result<UploadStateMachine.Outcome, TransportFailure> {
        await withTaskGroup(of: Result<UploadStateMachine.Outcome, TransportFailure>?.self) { group in
            group.addTask {
                do throws(TransportFailure) { return .success(try await request()) } catch { return .failure(error) }
            }
            group.addTask {
                do { try await Task.sleep(for: timeout) } catch { return nil }
                return .failure(.transport("no answer within \(String(format: "%.1f", timeout.seconds)) s"))
            }
            let first = await group.next()!
            group.cancelAll()
            if Task.isCancelled { return .failure(.cancelled) }
            return first ?? .failure(.cancelled)
        }
    }

    /// Records where the upload stands, so that a new process can continue it; a complete upload
    /// needs no entry (`finish` removes it next) unless the owner keeps finished entries.
    private func saveJournal(finished: Bool = false) {
        guard let journal, let sha256 = source.sha256 else { return }  // hashed whenever there is a journal
        let (location, offset, delivered) = machine.withLock { ($0.location, $0.offset, $0.mayHaveDelivered) }
        guard let location, offset < source.length || finished else { return }
        try? journal.save(.init(
            destination: destination, key: request.key, location: location, offset: offset, length: source.length,
            contentSHA256: sha256, updated: Date(), expires: expires.withLock { $0 }, mayHaveDelivered: delivered))
    }

    /// Emits progress only when it grows: never backwards, never past the total.
    private func report(acknowledged: Int64? = nil, sent: Int64? = nil, emit: @Sendable (UploadEvent) -> Void) {
        let changed = progress.withLock { p -> UploadProgress? in
            var next = p
            if let acknowledged { next.acknowledged = max(p.acknowledged, min(acknowledged, p.total)) }
            if let sent { next.sent = max(p.sent, min(sent, p.total)) }
            next.sent = max(next.sent, next.acknowledged)
            guard next != p else { return nil }
            p = next
            return next
        }
        if let changed { emit(.progress(changed)) }
    }
}
