import Foundation
import Synchronization
import Testing
@testable import PhotoPrep
import TestSupport

/// `MemoryBudget` and its `BudgetQueue`: what the photos a server prepares at the same time share — slots
/// (pipeline threads) and memory, photos started in the order they asked, a later one that fits going ahead
/// of one waiting for memory without delaying it, and nothing waiting for ever.
@Suite struct SharedMemoryBudgetTests {
    /// A value tasks share.
    final class Shared<Value: Sendable>: Sendable {
        let value: Mutex<Value>
        init(_ value: Value) { self.value = Mutex(value) }
    }

    // MARK: - The queue (pure)

    @Test func aPhotoWaitsUntilTheRunningOnesGiveBackEnough() {
        var queue = BudgetQueue(budget: 150, slots: 2)
        #expect(queue.ask(id: 0, bytes: 100) == [0])
        #expect(queue.free == 50)
        #expect(queue.ask(id: 1, bytes: 100) == [], "100 more than the 50 left: it waits")
        #expect(queue.finished(id: 0) == [1], "given back: it starts")
        #expect(queue.finished(id: 1) == [])
        #expect(queue.free == 150 && queue.freeSlots == 2)
        #expect(queue.finished(id: 1) == [] && queue.free == 150, "a photo finishes once")
    }

    @Test func noMorePhotosRunThanThereAreSlots() {
        var queue = BudgetQueue(budget: 1000, slots: 2)
        #expect(queue.ask(id: 0, bytes: 10) == [0])
        #expect(queue.ask(id: 1, bytes: 10) == [1])
        #expect(queue.ask(id: 2, bytes: 10) == [], "both threads are taken, though memory is left")
        #expect(queue.finished(id: 1) == [2])
    }

    @Test func photosThatFitStartInTheOrderAsked() {
        var queue = BudgetQueue(budget: 100, slots: 1)
        for id in 0..<4 { #expect(queue.ask(id: id, bytes: 10) == (id == 0 ? [0] : [])) }
        #expect(queue.finished(id: 0) == [1])
        #expect(queue.finished(id: 1) == [2])
        #expect(queue.finished(id: 2) == [3])
    }

    @Test func aLaterPhotoThatFitsGoesAheadOfOneWaitingForMemory() {
        var queue = BudgetQueue(budget: 100, slots: 4)
        #expect(queue.ask(id: 0, bytes: 40) == [0])
        #expect(queue.ask(id: 1, bytes: 45) == [1])
        #expect(queue.ask(id: 2, bytes: 30) == [], "15 left")
        #expect(queue.ask(id: 3, bytes: 10) == [3], "it fits, and leaves photo 2 its 30 once 0 and 1 end")
        #expect(queue.finished(id: 0) == [2])
    }

    @Test func whatGoesAheadLeavesTheFirstPhotoItsMemory() {
        var queue = BudgetQueue(budget: 100, slots: 4)
        #expect(queue.ask(id: 0, bytes: 60) == [0])
        #expect(queue.ask(id: 1, bytes: 70) == [], "40 left")
        #expect(queue.ask(id: 2, bytes: 20) == [2], "goes ahead: 20 of the 30 photo 1 leaves")
        #expect(queue.aheadOfFirst == 20)
        #expect(queue.ask(id: 3, bytes: 20) == [], "it fits in the 20 left, but with photo 2 it would take photo 1's memory")
        #expect(queue.finished(id: 0) == [1], "photo 1 starts once the photo running when it became first ended")
        #expect(queue.aheadOfFirst == 0, "photo 3 is first now, and waits for photos 1 and 2")
        #expect(queue.finished(id: 2) == [3])
        #expect(queue.finished(id: 1) == [] && queue.finished(id: 3) == [])
        #expect(queue.free == 100 && queue.freeSlots == 4)
    }

    @Test func aPhotoOverTheWholeBudgetRunsAlone() {
        var queue = BudgetQueue(budget: 100, slots: 2)
        #expect(queue.ask(id: 0, bytes: 500) == [0], "taken as the whole budget")
        #expect(queue.free == 0)
        #expect(queue.ask(id: 1, bytes: 1) == [])
        #expect(queue.finished(id: 0) == [1])
        #expect(queue.free == 99)
        #expect(queue.ask(id: 2, bytes: 500) == [], "it waits for photo 1")
        #expect(queue.ask(id: 3, bytes: 1) == [], "nothing goes ahead of a photo that needs the whole budget")
        #expect(queue.finished(id: 1) == [2])
        #expect(queue.finished(id: 2) == [3])
    }

    @Test func aWithdrawnPhotoNoLongerHoldsUpTheOthers() {
        var queue = BudgetQueue(budget: 100, slots: 2)
        #expect(queue.ask(id: 0, bytes: 40) == [0])
        #expect(queue.ask(id: 1, bytes: 90) == [], "waiting for memory")
        #expect(queue.ask(id: 2, bytes: 20) == [], "it fits, but would take photo 1's memory")
        #expect(queue.withdraw(id: 1) == [2])
        #expect(queue.withdraw(id: 2) == nil, "it started: it finishes as any other")
        #expect(queue.withdraw(id: 7) == nil)
    }

    // MARK: - The budget, with real photos and tasks

    /// Photos prepared by many tasks at once through a budget smaller than some of their estimates all come
    /// out; those running together never hold more than the budget (or one photo alone runs), never more than
    /// the slots run, a photo that fails gives back what it held, and at the end the whole budget is free.
    @Test func photosSharingABudgetAllFinishWithinItAndGiveItBack() async throws {
        let pipeline = PhotoPipeline(options: PrepareOptions(preset: .profile))
        let files = ["photos/ladybird-2560x1600.jpg", "photos/storm-1920x1280.jpg", "edge/progressive.jpg", "edge/photo-rgb8.png", "edge/truncated.png"]
        let estimates = files.map { pipeline.header(contentsOf: Fixture.path($0))?.estimate ?? 0 }
        #expect(estimates.prefix(4).allSatisfy { $0 > 0 })
        let budget = MemoryBudget(bytes: estimates.max()! * 3 / 2, slots: 2)
        let running = Shared<(photos: Int, bytes: Int, overBudget: Bool, overSlots: Bool)>((0, 0, false, false))
        let outcomes = try await withThrowingTaskGroup(of: Bool.self) { group in
            for i in 0..<20 {
                group.addTask {
                    let estimate = estimates[i % files.count]
                    return try await budget.run(estimate: estimate) {
                        running.value.withLock {
                            $0.photos += 1
                            $0.bytes += min(estimate, budget.bytes)
                            if $0.photos > 1 && $0.bytes > budget.bytes { $0.overBudget = true }
                            if $0.photos > 2 { $0.overSlots = true }
                        }
                        defer { running.value.withLock { $0.photos -= 1; $0.bytes -= min(estimate, budget.bytes) } }
                        // On a thread of its own, as on the server's pool: never holding one of the cooperative pool's few threads.
                        return try await onThread { (try? pipeline.prepare(contentsOf: Fixture.path(files[i % files.count]))) != nil }
                    }
                }
            }
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(outcomes.filter { $0 }.count == 16 && outcomes.filter { !$0 }.count == 4, "all but the truncated PNG's 4 come out")
        #expect(!running.value.withLock { $0.overBudget }, "photos running together held at most the budget")
        #expect(!running.value.withLock { $0.overSlots }, "at most two ran at once")
        #expect(budget.free == budget.bytes)
    }

    /// A photo whose task is cancelled while it waits stops waiting, runs nothing and holds nothing; the
    /// ones behind it are not held up.
    @Test func aPhotoCancelledWhileWaitingStopsWaitingAndHoldsNothing() async throws {
        let budget = MemoryBudget(bytes: 100, slots: 1)
        let (releases, release) = AsyncStream.makeStream(of: Void.self)
        let (starts, started) = AsyncStream.makeStream(of: Void.self)
        let holder = Task {
            try await budget.run(estimate: 60) {
                started.yield()
                for await _ in releases { break }
            }
        }
        var startsIterator = starts.makeAsyncIterator()
        await startsIterator.next()
        let ran = Shared(false)
        let waiter = Task { try await budget.run(estimate: 10) { ran.value.withLock { $0 = true } } }
        try await waitUntil { budget.waiting == 1 }
        let behind = Task { try await budget.run(estimate: 10) { 2 } }
        try await waitUntil { budget.waiting == 2 }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        #expect(!ran.value.withLock { $0 })
        #expect(budget.waiting == 1, "only the photo behind it waits")
        release.yield()
        try await holder.value
        #expect(try await behind.value == 2, "the photo behind the cancelled one runs once the slot is free")
        #expect(budget.free == 100)
        #expect(try await budget.run(estimate: 100) { 1 } == 1, "the slot and the memory are all free again")
    }

    /// The estimate a photo asks with is the one `prepare` plans with, read from the file's header; a file
    /// that is not a photo has none (its `prepare` fails at once).
    @Test func theEstimateComesFromTheHeader() throws {
        let pipeline = PhotoPipeline(options: PrepareOptions(preset: .group))
        let path = Fixture.path("edge/progressive.jpg")
        let bytes = try Fixture.bytes("edge/progressive.jpg")
        let info = try SourceInfo.read(bytes, maxPixels: .max)
        let target = pipeline.options.outputSize(width: info.width, height: info.height)
        let plan = DecodePlan(info: info, fileBytes: bytes.count, target: target, options: pipeline.options, fromFile: true)
        #expect(pipeline.header(contentsOf: path)?.estimate == plan.estimate.bytes)
        #expect(plan.estimate.bytes > info.jpeg!.blockCount * 64 * 2, "a progressive JPEG holds its coefficients")
        #expect(pipeline.header(contentsOf: Fixture.path("edge/not-an-image.txt")) == nil)
        #expect(pipeline.header(contentsOf: "/nonexistent/photo.jpg") == nil)
    }

    /// A photo prepared with the header read while it waited comes out byte for byte as one prepared from its
    /// file alone: a large JPEG decoded row by row (the file is not read again), a small one passed through and
    /// a progressive one and a PNG (both read again, as they are not decoded row by row).
    @Test func aPhotoPreparedWithItsHeaderComesOutTheSame() throws {
        let pipeline = PhotoPipeline(options: PrepareOptions(preset: .group))
        for name in ["photos/ladybird-2560x1600.jpg", "photos/storm-1920x1280.jpg", "edge/progressive.jpg", "edge/photo-rgb8.png", "orientation/landscape_6.jpg", "orientation/landscape_1.jpg"] {
            let path = Fixture.path(name)
            let header = try #require(pipeline.header(contentsOf: path), "\(name)")
            let with = try pipeline.prepare(contentsOf: path, header: header)
            let without = try pipeline.prepare(contentsOf: path)
            #expect(with.jpeg == without.jpeg, "\(name)")
            #expect(with.report.action == without.report.action && with.report.sourceBytes == without.report.sourceBytes, "\(name)")
        }
        let large = try #require(pipeline.header(contentsOf: Fixture.path("photos/ladybird-2560x1600.jpg")))
        #expect(large.streamed && large.info.width > pipeline.options.maxEdge, "the one whose file is not read again")
    }

    /// A JPEG read from its file is estimated without the file's bytes and, when its rows go straight into
    /// the resizer, without the decoded image; a progressive one still with all its coefficients.
    @Test func aJPEGFromItsFileIsEstimatedAsItIsDecoded() throws {
        let options = PrepareOptions(preset: .group)
        for name in ["photos/ladybird-2560x1600.jpg", "edge/progressive.jpg"] {
            let bytes = try Fixture.bytes(name)
            let info = try SourceInfo.read(bytes, maxPixels: .max)
            var small = options
            small.maxEdge = 300
            small.quality = .fixed(85)  // no score search: the encode, holding no kept reference, does not outweigh the decode
            let target = small.outputSize(width: info.width, height: info.height)
            let whole = DecodePlan(info: info, fileBytes: bytes.count, target: target, options: small)
            let rows = DecodePlan(info: info, fileBytes: bytes.count, target: target, options: small, fromFile: true)
            #expect(rows.streamed && !whole.streamed)
            #expect(rows.estimate.bytes < whole.estimate.bytes - bytes.count, "\(name): \(rows.estimate.bytes) against \(whole.estimate.bytes)")
            if info.jpeg!.coding == .progressive {
                #expect(rows.estimate.bytes > info.jpeg!.blockCount * 64 * 2, "the coefficients stay")
            }
        }
    }
}
