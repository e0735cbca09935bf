import Foundation
import Synchronization
import Testing
@testable import PhotoPrep
import TestSupport

/// `MemoryBudget`: what pipelines preparing at the same time share — a reservation waits while the others
/// hold too much, in the order asked, and one larger than the whole budget runs alone.
@Suite struct SharedMemoryBudgetTests {
    final class Flag: Sendable {
        let value = Atomic<Bool>(false)
        var isSet: Bool { value.load(ordering: .sequentiallyConsistent) }
    }

    /// Runs `body` on a thread of its own; the flag is set when it returns.
    func onThread(_ body: @escaping @Sendable () -> Void) -> Flag {
        let done = Flag()
        Thread { body(); done.value.store(true, ordering: .sequentiallyConsistent) }.start()
        return done
    }

    func waitFor(_ flag: Flag, seconds: Double = 10) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !flag.isSet && Date() < deadline { usleep(1000) }
        return flag.isSet
    }

    @Test func aReservationWaitsUntilTheOthersGiveBackEnough() {
        let budget = MemoryBudget(bytes: 150)
        let first = budget.reserve(100)
        #expect(first == 100 && budget.free == 50)
        let second = onThread { budget.release(budget.reserve(100)) }
        usleep(200_000)
        #expect(!second.isSet, "100 more than the 50 left: it waits")
        budget.release(first)
        #expect(waitFor(second), "given back: it runs")
        #expect(budget.free == 150)
    }

    @Test func reservationsAreServedInTheOrderAsked() {
        let budget = MemoryBudget(bytes: 100)
        let held = budget.reserve(60)
        let large = onThread { budget.release(budget.reserve(80)) }  // waits for the 60
        usleep(100_000)
        let small = onThread { budget.release(budget.reserve(10)) }  // would fit now, but comes after the large one
        usleep(200_000)
        #expect(!small.isSet, "not ahead of the large one asked before it")
        #expect(!large.isSet)
        budget.release(held)
        #expect(waitFor(large) && waitFor(small))
        #expect(budget.free == 100)
    }

    @Test func aReservationOverTheWholeBudgetRunsAlone() {
        let budget = MemoryBudget(bytes: 100)
        #expect(budget.reserve(500) == 100, "taken as the whole budget")
        #expect(budget.free == 0)
        budget.release(100)
        #expect(budget.free == 100)
    }

    /// Through the pipeline: photos prepared on two threads with a budget smaller than one photo's estimate
    /// all come out (one at a time), a photo that fails gives its reservation back, and at the end the whole
    /// budget is free again.
    @Test func pipelinesSharingABudgetAllFinishAndGiveItBack() throws {
        let budget = MemoryBudget(bytes: 1 << 20)
        let pipeline = PhotoPipeline(options: PrepareOptions(preset: .profile), memory: budget)
        let files = ["photos/ladybird-2560x1600.jpg", "photos/storm-1920x1280.jpg", "edge/progressive.jpg", "edge/photo-rgb8.png"]
        // On threads of their own, as the server's pipeline pool runs them (a reservation blocks its thread).
        let results = Mutex<[Result<Int, PhotoPrepError>]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { i in
            let result = Result { () throws(PhotoPrepError) in try pipeline.prepare(contentsOf: Fixture.path(files[i % 4])).report.outputWidth }
            results.withLock { $0.append(result) }
        }
        let widths = try results.withLock { try $0.map { try $0.get() } }
        #expect(widths.count == 8 && widths.allSatisfy { $0 > 0 })
        #expect(throws: PhotoPrepError.self) { try pipeline.prepare(contentsOf: Fixture.path("edge/truncated.png")) }
        #expect(budget.free == 1 << 20)
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
