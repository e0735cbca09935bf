import CMalloc
import Synchronization

/// The pipeline threads and the memory that the photos a server prepares at the same time share. Each photo
/// asks with its decode's estimate (`PhotoPipeline.header(contentsOf:)`) before it goes to
/// a thread, and waits, suspended rather than holding a thread, while the threads are busy or the running
/// photos hold too much. Two 17 MP progressive JPEGs hold ~100 MB of coefficients each: a server preparing on
/// several threads stays within the bound however large the photos that arrive together. `BudgetQueue`
/// decides which waiting photo starts (in the order asked; a later one that fits goes ahead of one waiting
/// for memory without delaying it).
///
/// Give it as many slots as the pool the work runs on has threads, and run all of that pool's photos through
/// it: the pool's own queue then stays empty, and the order is this one's.
public final class MemoryBudget: Sendable {
    /// The bytes all running photos together may hold.
    public let bytes: Int
    private struct State {
        var queue: BudgetQueue
        var nextID = 0
        var waiters: [Int: CheckedContinuation<Void, any Error>] = [:]
    }
    private let state: Mutex<State>

    public init(bytes: Int, slots: Int) {
        precondition(bytes > 0 && slots > 0)
        self.bytes = bytes
        state = Mutex(State(queue: BudgetQueue(budget: bytes, slots: slots)))
    }

    /// Runs `work` once a slot is free and `estimate` bytes fit (see `BudgetQueue`), and gives both back when
    /// it ends. Throws `CancellationError`, without running `work`, when the task is cancelled while waiting.
    public func run<T>(estimate: Int, _ work: () async throws -> T) async throws -> T {
        let id = try await start(estimate: estimate)
        defer { finished(id) }
        return try await work()
    }

    /// Call on the pipeline thread right after preparing a photo estimated at `estimate`: when it held a quarter
    /// of the budget or more, the memory freed in the threads' malloc arenas goes back to the system
    /// (`malloc_trim`). glibc keeps a thread's freed memory for its next allocations, outside what the budget
    /// counts: in a burst of 100 photos (`Benchmarks/ingest.sh`) the server's peak was 287–349 MB without this
    /// and 253–273 MB with it; trimming after every photo gave 228–260 MB for about 3 % more CPU.
    public func giveBackFreedMemory(after estimate: Int) {
        if estimate >= bytes / 4 { _ = malloc_trim(0) }
    }

    /// The bytes not held by running photos.
    public var free: Int { state.withLock { $0.queue.free } }

    /// The photos waiting for a slot or for memory.
    public var waiting: Int { state.withLock { $0.waiters.count } }

    private func start(estimate: Int) async throws -> Int {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let ready = state.withLock { state in
                    guard !Task.isCancelled else { return [(continuation, Result<Void, any Error>.failure(CancellationError()))] }
                    state.waiters[id] = continuation
                    return Self.resumptions(of: state.queue.ask(id: id, bytes: estimate), in: &state)
                }
                for (waiter, result) in ready { waiter.resume(with: result) }
            }
            return id
        } onCancel: {
            let ready = state.withLock { state -> [(CheckedContinuation<Void, any Error>, Result<Void, any Error>)] in
                guard let started = state.queue.withdraw(id: id), let waiter = state.waiters.removeValue(forKey: id) else { return [] }
                return [(waiter, .failure(CancellationError()))] + Self.resumptions(of: started, in: &state)
            }
            for (waiter, result) in ready { waiter.resume(with: result) }
        }
    }

    private func finished(_ id: Int) {
        let ready = state.withLock { state in Self.resumptions(of: state.queue.finished(id: id), in: &state) }
        for (waiter, result) in ready { waiter.resume(with: result) }
    }

    /// The waiters of the photos that start, taken out of `state` to be resumed outside the lock.
    private static func resumptions(
        of started: [Int], in state: inout State
    ) -> [(CheckedContinuation<Void, any Error>, Result<Void, any Error>)] {
        started.compactMap { id in state.waiters.removeValue(forKey: id).map { ($0, .success(())) } }
    }
}
