import Foundation
@testable import PhotoServer
import Synchronization
import Testing

/// What requests wait for without polling: an announced upload's creation, the server's shutdown.
@Suite struct WaitingTests {
    @Test func aWaiterForAnAnnouncedUploadGoesOnWhenItSettles() async {
        let announced = Announcements()
        announced.add("a")
        let done = Count()
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await announced.waitUntilSettled("a")
                done.add()
            }
            // Not before it settles (the waiter had every chance to run).
            for _ in 0..<100 { await Task.yield() }
            #expect(done.value == 0)
            announced.settle("a")
        }
        #expect(done.value == 1)
        // Ids never announced, or settled already, do not wait at all.
        await announced.waitUntilSettled("a")
        await announced.waitUntilSettled("b")
    }

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
