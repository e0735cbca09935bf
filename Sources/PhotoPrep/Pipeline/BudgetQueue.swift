/// Which photos waiting for the pipeline start, and when: a pure state machine that `MemoryBudget` drives.
/// Events in (a photo asks with its decode's estimate, a photo finished, a waiter gave up), the photos to
/// start out.
///
/// A photo starts when a pipeline thread (a slot) is free and its estimate fits in the memory the running
/// ones leave, in the order the photos asked. When the first waiting photo does not fit, a later one that
/// fits may go ahead of it (backfilling), as long as the photos that went ahead of it leave it its memory:
/// together they hold at most the budget less its estimate. It therefore starts once the photos running
/// when it became first have finished, as it would have without them, and a slot they would have left idle
/// is used meanwhile. (The uploads of a burst end in the order of their size, so its largest photos ask
/// last; without this, each of them waited for the one before while a thread idled.) An estimate over the
/// whole budget counts as the whole budget: that photo runs alone.
struct BudgetQueue: Sendable {
    struct Waiting: Sendable {
        var id: Int
        var bytes: Int
    }

    /// The memory all running photos together may hold.
    let budget: Int
    /// How many photos may run at once (pipeline threads).
    let slots: Int
    /// Photos waiting to start, in the order they asked.
    private(set) var waiting: [Waiting] = []
    /// Running photos: what each holds, and whether it went ahead of the photo first in line now.
    private var running: [Int: (bytes: Int, ahead: Bool)] = [:]

    init(budget: Int, slots: Int) {
        precondition(budget > 0 && slots > 0)
        self.budget = budget
        self.slots = slots
    }

    /// Memory not held by running photos.
    var free: Int { budget - running.values.reduce(0) { $0 + $1.bytes } }
    /// Slots not taken by running photos.
    var freeSlots: Int { slots - running.count }
    /// What the photos that went ahead of the first waiting photo hold.
    var aheadOfFirst: Int { running.values.reduce(0) { $0 + ($1.ahead ? $1.bytes : 0) } }

    /// What a photo estimated at `bytes` holds while it runs: at most the whole budget.
    func held(_ bytes: Int) -> Int { min(max(0, bytes), budget) }

    /// Photo `id`, estimated at `bytes`, asks to start; returns the photos that start now (it among them,
    /// when it may).
    mutating func ask(id: Int, bytes: Int) -> [Int] {
        waiting.append(Waiting(id: id, bytes: held(bytes)))
        return startWhatFits()
    }

    /// Running photo `id` finished; returns the photos that start now.
    mutating func finished(id: Int) -> [Int] {
        guard running.removeValue(forKey: id) != nil else { return [] }
        return startWhatFits()
    }

    /// Photo `id` stops waiting (its caller was cancelled); returns the photos that start now, or nil when
    /// it is not waiting (it started already: it finishes as any other).
    mutating func withdraw(id: Int) -> [Int]? {
        guard let index = waiting.firstIndex(where: { $0.id == id }) else { return nil }
        waiting.remove(at: index)
        if index == 0 { newFirst() }
        return startWhatFits()
    }

    private mutating func startWhatFits() -> [Int] {
        var started: [Int] = []
        while freeSlots > 0, let first = waiting.first {
            let (free, ahead) = (self.free, aheadOfFirst)
            if first.bytes <= free {
                started.append(start(at: 0, ahead: false))
                newFirst()
            } else if let later = waiting.indices.dropFirst().first(where: {
                waiting[$0].bytes <= free && ahead + waiting[$0].bytes <= budget - first.bytes
            }) {
                started.append(start(at: later, ahead: true))
            } else {
                break
            }
        }
        return started
    }

    private mutating func start(at index: Int, ahead: Bool) -> Int {
        let photo = waiting.remove(at: index)
        running[photo.id] = (photo.bytes, ahead)
        return photo.id
    }

    /// Another photo is first in line: the photos running now are those it waits for, not ahead of it.
    private mutating func newFirst() {
        running = running.mapValues { (bytes: $0.bytes, ahead: false) }
    }
}
