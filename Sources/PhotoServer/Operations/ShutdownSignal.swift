import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// Tells requests in flight that the server is stopping, so that a long upload stops reading at once
/// and acknowledges what it flushed (the client resumes from there). A service of its own, listed last
/// in the service group: graceful shutdown reaches it first, before the HTTP server waits for requests.
///
/// With `endProcessAfter`, it is also the process's last word: that long after the signal, whatever still runs
/// (a request waiting on a database or bucket that never answers, past the service group's grace and the
/// cancellation that follows it) is logged and the process ends (`_exit`), so SIGTERM always ends it — the
/// deadline runs on a thread of its own, as a signal handler would, because every task may be stuck.
final class ShutdownSignal: Service, Sendable {
    let endProcessAfter: Duration?
    let logger: Logger

    init(endProcessAfter: Duration? = nil, logger: Logger = Logger(label: "photoprep.shutdown")) {
        self.endProcessAfter = endProcessAfter
        self.logger = logger
    }

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
        try? await gracefulShutdown()  // or cancelled: the service group ends either way
        if let deadline = endProcessAfter {
            let logger = self.logger
            Thread.detachNewThread {
                Thread.sleep(forTimeInterval: Double(deadline.components.seconds) + Double(deadline.components.attoseconds) / 1e18)
                logger.error("shutdown: work still running \(deadline) after the signal (a dependency that never answered); ending the process")
                _exit(1)
            }
        }
        let waiters = state.withLock { state in
            state.isSet = true
            defer { state.waiters = [:] }
            return state.waiters
        }
        for waiter in waiters.values { waiter.resume() }
    }
}
