import ServiceLifecycle
import Synchronization

/// Tells requests in flight that the server is stopping, so that a long upload stops reading at once
/// and acknowledges what it flushed (the client resumes from there). A service of its own, listed last
/// in the service group: graceful shutdown reaches it first, before the HTTP server waits for requests.
final class ShutdownSignal: Service, Sendable {
    private let flag = Atomic<Bool>(false)

    var isSet: Bool { flag.load(ordering: .relaxed) }

    /// Returns once the server is stopping (or the task is cancelled).
    func wait() async {
        while !isSet {
            do { try await Task.sleep(for: .milliseconds(100)) } catch { return }
        }
    }

    func run() async throws {
        try? await gracefulShutdown()
        flag.store(true, ordering: .relaxed)
    }
}
