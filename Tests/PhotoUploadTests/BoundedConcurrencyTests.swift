import PhotoFiles
import Synchronization
import Testing

/// The one bounded-concurrency loop: never more than `limit` at once, every item once, in the given order,
/// and no new item once told to stop.
@Suite struct BoundedConcurrencyTests {
    @Test(arguments: [1, 3, 8]) func neverMoreThanTheLimitAndEveryItemOnce(limit: Int) async {
        let gauge = Gauge()
        var seen: [Int] = []
        let started = await BoundedConcurrency.run(count: 20, limit: limit, order: Array((0..<20).reversed())) { index in
            gauge.enter()
            // Let the others start if they could: the gauge would see more than `limit`.
            for _ in 0..<50 { await Task.yield() }
            gauge.leave()
            return index * 10
        } finished: { index, result in
            #expect(result == index * 10)
            seen.append(index)
        }
        #expect(started == 20)
        #expect(seen.sorted() == Array(0..<20))
        #expect(gauge.peak <= limit)
        #expect(gauge.peak >= min(limit, 2), "with a limit of \(limit), several ran at once")
        if limit == 1 { #expect(seen == Array((0..<20).reversed())) }  // one at a time: the order given
    }

    @Test func noItemStartsOnceToldToStop() async {
        let stop = Atomic<Bool>(false)
        var seen: [Int] = []
        let started = await BoundedConcurrency.run(count: 10, limit: 2, keepStarting: { !stop.load(ordering: .relaxed) }) { $0 } finished: { index, _ in
            seen.append(index)
            if seen.count == 3 { stop.store(true, ordering: .relaxed) }
        }
        // Two started at first; each of the first two endings started one more; the third ending stopped it.
        #expect(started == 4)
        #expect(seen.count == 4)
    }
}

/// How many items run at once, and the most that ever did.
private final class Gauge: Sendable {
    private let state = Mutex<(now: Int, peak: Int)>((0, 0))
    func enter() { state.withLock { $0.now += 1; $0.peak = max($0.peak, $0.now) } }
    func leave() { state.withLock { $0.now -= 1 } }
    var peak: Int { state.withLock { $0.peak } }
}
