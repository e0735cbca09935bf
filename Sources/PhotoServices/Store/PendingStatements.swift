import NIOCore
import Synchronization

/// The statements sent on one connection and not yet answered; once the connection closed, none is taken.
final class PendingStatements: Sendable {
    private struct State {
        var closed = false
        var next = 0
        var waiting: [Int: EventLoopPromise<Void>] = [:]
    }

    private let state = Mutex(State())

    /// Registers a statement's promise; nil when the connection has closed.
    func add(_ promise: EventLoopPromise<Void>) -> Int? {
        state.withLock { state in
            guard !state.closed else { return nil }
            state.next += 1
            state.waiting[state.next] = promise
            return state.next
        }
    }

    /// Whether the statement was still waiting (then its answer is the database's, not `closeAll`'s).
    func remove(_ id: Int) -> Bool {
        state.withLock { $0.waiting.removeValue(forKey: id) != nil }
    }

    /// The connection closed: every statement still waiting fails, and no new one is taken.
    func closeAll() {
        let waiting = state.withLock { state in
            state.closed = true
            defer { state.waiting = [:] }
            return Array(state.waiting.values)
        }
        for promise in waiting { promise.fail(GuardedSQL.ConnectionClosed()) }
    }
}
