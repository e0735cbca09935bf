import Foundation
import Synchronization

/// One upload in progress: its events, and the controls `cancel()`, `pause()` and `resume()`.
///
/// Cancelling the Swift task that consumes `events` does not stop the upload; `cancel()` does, and
/// so does cancelling a task awaiting `result()`. Both end in the same `.cancelled` outcome, after
/// the partial upload was deleted at the destination.
public final class UploadTask: Sendable {
    /// Progress, pause and terminal events; ends after the terminal event.
    public let events: AsyncStream<UploadEvent>

    private let continuation: AsyncStream<UploadEvent>.Continuation
    private let session: UploadSession?
    private let state = Mutex(State())

    private struct State {
        var running: Task<Void, Never>?
        var pausing = false
        var terminal: UploadEvent?
        var waiters: [CheckedContinuation<UploadEvent, Never>] = []
    }

    init(session: UploadSession) {
        (events, continuation) = AsyncStream.makeStream(of: UploadEvent.self, bufferingPolicy: .unbounded)
        self.session = session
        start()
    }

    /// A task that failed before sending anything (for example, the file could not be read).
    init(failed error: UploadError) {
        (events, continuation) = AsyncStream.makeStream(of: UploadEvent.self, bufferingPolicy: .unbounded)
        session = nil
        finishRun(.failed(error))
    }

    /// Stops the transfer and deletes the partial upload at the destination.
    public func cancel() {
        state.withLock { $0.pausing = false; $0.running?.cancel() }
    }

    /// Stops the transfer without deleting anything; `resume()` continues where it stopped.
    public func pause() {
        state.withLock { $0.pausing = true; $0.running?.cancel() }
    }

    /// Continues a paused upload.
    public func resume() {
        let paused = state.withLock { $0.running == nil && $0.terminal == nil }
        if paused { start() }
    }

    /// Waits for the terminal event. Cancelling the waiting task cancels the upload.
    public func result() async -> UploadEvent {
        await withTaskCancellationHandler {
            await withCheckedContinuation { waiter in
                let done = state.withLock { state -> UploadEvent? in
                    if let terminal = state.terminal { return terminal }
                    state.waiters.append(waiter)
                    return nil
                }
                if let done { waiter.resume(returning: done) }
            }
        } onCancel: {
            cancel()
        }
    }

    private func start() {
        guard let session else { return }
        state.withLock { state in
            state.pausing = false
            state.running = Task { [self] in
                let event = await session.run(emit: { self.continuation.yield($0) }, pausing: { self.state.withLock { $0.pausing } })
                finishRun(event)
            }
        }
    }

    private func finishRun(_ event: UploadEvent) {
        let waiters = state.withLock { state -> [CheckedContinuation<UploadEvent, Never>] in
            state.running = nil
            guard event.isTerminal else { return [] }
            state.terminal = event
            defer { state.waiters = [] }
            return state.waiters
        }
        continuation.yield(event)
        if event.isTerminal {
            continuation.finish()
            for waiter in waiters { waiter.resume(returning: event) }
        }
    }
}
