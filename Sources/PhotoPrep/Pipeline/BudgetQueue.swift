/// Which photos waiting for the pipeline start, and when: a pure state machine that `MemoryBudget` drives.
/// Events in (a photo asks with its decode's estimate, a photo finished, a waiter gave up), the photos to
/// start out.
///
/// A photo starts when a pipeline thread (a slot) is free and its estimate fits in the memory the running
/// ones leave. Photos start in the order they asked, with one exception for **large** photos, those that
/// need more than half the budget (two of them never fit together): the oldest large photo starts as soon
/// as no other large one runs and it fits, ahead of ordinary photos that asked before it. Large photos
/// therefore run one after another beside ordinary ones from the start of a burst, instead of meeting at
/// its end, where each would run alone with the other threads idle (the uploads of a burst end in the
/// order of their size, so its largest photos ask last).
///
/// Nothing waits for ever: while a large photo waits for memory and no large one runs, nothing else starts,
/// so it starts once the photos running then have finished. Large photos keep their order among
/// themselves, and so do ordinary ones. An estimate over the whole budget counts as the whole budget: that
/// photo runs alone.
struct BudgetQueue: Sendable {
    struct Waiting: Sendable, Equatable {
        var id: Int
        var bytes: Int
    }

    /// The memory all running photos together may hold.
    let budget: Int
    /// Memory not held by running photos.
    private(set) var free: Int
    /// Slots (pipeline threads) not taken by running photos.
    private(set) var freeSlots: Int
    /// Photos waiting to start, in the order they asked.
    private(set) var waiting: [Waiting] = []
    /// Whether a large photo runs (at most one does).
    private(set) var largeRunning = false

    init(budget: Int, slots: Int) {
        precondition(budget > 0 && slots > 0)
        self.budget = budget
        free = budget
        freeSlots = slots
    }

    /// What a photo estimated at `bytes` holds while it runs: at most the whole budget.
    func held(_ bytes: Int) -> Int { min(max(0, bytes), budget) }

    /// Two photos this large never fit together.
    func isLarge(_ bytes: Int) -> Bool { held(bytes) * 2 > budget }

    /// Photo `id`, estimated at `bytes`, asks to start; returns the photos that start now (it among them,
    /// when it may).
    mutating func ask(id: Int, bytes: Int) -> [Int] {
        waiting.append(Waiting(id: id, bytes: held(bytes)))
        return startWhatFits()
    }

    /// A running photo estimated at `bytes` finished; returns the photos that start now.
    mutating func finished(bytes: Int) -> [Int] {
        let amount = held(bytes)
        free += amount
        freeSlots += 1
        if isLarge(amount) { largeRunning = false }
        return startWhatFits()
    }

    /// Photo `id` stops waiting (its caller was cancelled); returns the photos that start now, or nil when
    /// it is not waiting (it started already: it finishes as any other).
    mutating func withdraw(id: Int) -> [Int]? {
        guard let index = waiting.firstIndex(where: { $0.id == id }) else { return nil }
        waiting.remove(at: index)
        return startWhatFits()
    }

    private mutating func startWhatFits() -> [Int] {
        var started: [Int] = []
        while freeSlots > 0 {
            if !largeRunning, let large = waiting.firstIndex(where: { isLarge($0.bytes) }) {
                guard waiting[large].bytes <= free else { break }  // it waits for memory, and nothing starts before it
                largeRunning = true
                started.append(start(large))
                continue
            }
            guard let ordinary = waiting.firstIndex(where: { !isLarge($0.bytes) }), waiting[ordinary].bytes <= free else { break }
            started.append(start(ordinary))
        }
        return started
    }

    private mutating func start(_ index: Int) -> Int {
        let photo = waiting.remove(at: index)
        free -= photo.bytes
        freeSlots -= 1
        return photo.id
    }
}
