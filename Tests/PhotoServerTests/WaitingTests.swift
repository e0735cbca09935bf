import Foundation
@testable import PhotoServer
import Synchronization
import Testing

/// What requests wait for without polling: the server's shutdown.
@Suite struct WaitingTests {
    @Test func shutdownWakesEveryWaiterAndCancellationWakesOne() async throws {
        let signal = ShutdownSignal()
        // A cancelled waiter returns at once, without the signal.
        let cancelled = Task { await signal.wait() }
        cancelled.cancel()
        await cancelled.value
        #expect(!signal.isSet)
        let woken = Count()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<3 {
                group.addTask {
                    await signal.wait()
                    woken.add()
                }
            }
            for _ in 0..<100 { await Task.yield() }
            #expect(woken.value == 0)
            // The service's run() returns once graceful shutdown is triggered; here its task is cancelled.
            group.addTask {
                let run = Task { try await signal.run() }
                run.cancel()
                try await run.value
            }
            try await group.waitForAll()
        }
        #expect(signal.isSet)
        #expect(woken.value == 3)
        await signal.wait()  // set already: returns at once
    }
}

/// How many waiters got through.
private final class Count: Sendable {
    private let count = Atomic<Int>(0)
    func add() { count.add(1, ordering: .sequentiallyConsistent) }
    var value: Int { count.load(ordering: .sequentiallyConsistent) }
}
