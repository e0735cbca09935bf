import PhotoServices
import Synchronization
import Testing

/// The one lease-renewal loop: renewed while the work runs, never after; a lost lease is reported once
/// and no longer renewed.
@Suite struct LeaseRenewalTests {
    @Test func renewedWhileTheWorkRunsAndNotAfter() async throws {
        let renewals = Counter()
        let result = await LeaseRenewal.holding(for: .milliseconds(30)) {
            renewals.add()
            return true
        } _: {
            // The work lasts until the lease was renewed three times (every 10 ms).
            while renewals.value < 3 { try? await Task.sleep(for: .milliseconds(5)) }
            return "done"
        }
        #expect(result == "done")
        let afterwards = renewals.value
        try await Task.sleep(for: .milliseconds(100))
        #expect(renewals.value == afterwards, "renewed after the work ended")
    }

    /// A holder stuck past `atMost` stops renewing, though its work goes on: its lease runs out for another to take.
    @Test func renewalStopsAfterAtMostWhileTheWorkGoesOn() async throws {
        let renewals = Counter()
        await LeaseRenewal.holding(for: .milliseconds(30), atMost: .milliseconds(50)) {
            renewals.add()
            return true
        } _: {
            try? await Task.sleep(for: .milliseconds(300))
        }
        // Every 10 ms for 50 ms: a handful at most (fewer on a busy machine), where 300 ms of work would have had ~30.
        #expect(renewals.value <= 6, "\(renewals.value) renewals")
    }

    @Test func aLostLeaseIsReportedOnceAndNoLongerRenewed() async throws {
        let renewals = Counter(), losses = Counter()
        await LeaseRenewal.holding(for: .milliseconds(30)) {
            renewals.add()
            return renewals.value < 2  // the second renewal finds another holder
        } lost: {
            losses.add()
        } _: {
            while losses.value == 0 { try? await Task.sleep(for: .milliseconds(5)) }
            // Time for more renewals, were any still made.
            try? await Task.sleep(for: .milliseconds(100))
        }
        #expect(renewals.value == 2)
        #expect(losses.value == 1)
    }
}

private final class Counter: Sendable {
    private let count = Atomic<Int>(0)
    func add() { count.add(1, ordering: .sequentiallyConsistent) }
    var value: Int { count.load(ordering: .sequentiallyConsistent) }
}
