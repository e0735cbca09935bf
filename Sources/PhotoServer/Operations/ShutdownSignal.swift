import ServiceLifecycle
import Synchronization

/// Tells requests in flight that the server is stopping, so that a long upload stops reading at once
/// and acknowledges what it flushed (the client resumes from there). A service of its own, listed last
/// in the service group: graceful shutdown reaches it first, before the HTTP server waits for requests.
final class ShutdownSignal: Service, Sendable {
    private struct State {
        var isSet = false
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter = 0
    }

    private let state = Mutex(State())

    var isSet: Bool { state.withLock { $0.isSet } }

    /// Returns once the server is stopping (or the task is cancelled).
    func wait() async {
        let id = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state in
                    guard !state.isSet, !Task.isCancelled else { return true }
                    state.waiters[id] = waiter
                    return false
                }
                if now { waiter.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }

    func run() async throws {
        try? await gracefulShutdown()
        let waiters = state.withLock { state in
            state.isSet = true
            defer { state.waiters = [:] }
            return state.waiters
        }
        for waiter in waiters.values { waiter.resume() }
    }
}
