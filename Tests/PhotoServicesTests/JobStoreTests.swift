import Foundation
import PhotoPrep
import SQLKit
@testable import PhotoServices
import Testing
import TestSupport

/// The job queue on the database's own guarantees (SQLite's write transaction, PostgreSQL's
/// `FOR UPDATE SKIP LOCKED`): one holder per job, leases that run out, takeover, and the history of
/// every holding.
@Suite struct JobStoreTests {
    let t0 = Date()

    /// A store with `count` pending jobs of user u1 (profile pictures), oldest first, headed for
    /// `destinations[i]` (default: none recorded).
    func store(jobs count: Int, destinations: [String?]? = nil) async throws -> (JobStore, [String]) {
        let folder = try temporaryFolder()
        let database = try await Harness.database(in: folder)
        let store = JobStore(database: database)
        _ = try await UserDirectory(database: database).add(id: "u1", displayName: "Ana")
        var ids: [String] = []
        for i in 0..<count {
            var job = try newJob(
                kind: .profile, caller: "u1", subject: "u1", path: .profileImage(userId: "u1", file: "\(i).jpg"),
                original: [0xFF, 0xD8], staging: folder, destination: destinations?[i])
            job.createdAt = t0 + Double(i) / 1000
            try await database.write { [job] db in try await JobStore.insert(job, db) }
            ids.append(job.id)
        }
        return (store, ids)
    }

    /// A runner takes only the jobs headed where it uploads, and those from before destinations were recorded.
    @Test func aRunnerTakesTheJobsHeadedWhereItUploads() async throws {
        let (any, ids) = try await store(jobs: 4, destinations: ["s3://a", "file:///b", nil, "s3://a"])
        let a = JobStore(database: any.database, destination: "s3://a")
        #expect(try await a.runnable(at: t0) == [ids[0], ids[2], ids[3]])
        #expect(try await a.claim(ids[1], runner: "A", lease: .seconds(10), at: t0) == nil, "headed for file:///b")
        var taken: [String] = []
        while let job = try await a.claimNext(runner: "A", lease: .seconds(10), at: t0) { taken.append(job.id) }
        #expect(taken == [ids[0], ids[2], ids[3]])
        let b = JobStore(database: any.database, destination: "file:///b")
        #expect(try await b.claimNext(runner: "B", lease: .seconds(10), at: t0)?.id == ids[1])
        #expect(try await any.job(ids[1])?.destination == "file:///b")
    }

    @Test func aJobIsHeldByOneRunnerUntilItsLeaseRunsOut() async throws {
        let (store, ids) = try await store(jobs: 1)
        let id = ids[0]
        let a = try #require(try await store.claim(id, runner: "A", lease: .seconds(10), at: t0))
        #expect(a.state == .uploading && a.leaseOwner == "A" && a.attempts == 1)
        #expect(try await store.claim(id, runner: "B", lease: .seconds(10), at: t0 + 5) == nil, "held: B may not take it")
        #expect(try await store.renew([id], runner: "A", lease: .seconds(10), at: t0 + 9).isEmpty, "A renews until t0 + 19")
        #expect(try await store.claim(id, runner: "B", lease: .seconds(10), at: t0 + 15) == nil, "renewed: still A's")

        // A stops renewing (its machine died): after the lease B takes it over.
        let b = try #require(try await store.claim(id, runner: "B", lease: .seconds(10), at: t0 + 20))
        #expect(b.leaseOwner == "B" && b.attempts == 2)
        #expect(try await store.renew([id], runner: "A", lease: .seconds(10), at: t0 + 21) == [id], "A learns it lost the job")
        // What A would still write is ignored: B holds the job.
        try await store.saveProgress(id, runner: "A", location: "http://a/stale", uploadedBytes: 99)
        let (recorded, _) = try await store.complete(a, runner: "A", url: "http://a/photo.jpg", content: StoredPhotos.Content(of: [0xFF, 0xD8]))
        #expect(!recorded)
        let current = try #require(try await store.job(id))
        #expect(current.state == .uploading && current.leaseOwner == "B" && current.uploadLocation == nil && current.url == nil)

        let (done, _) = try await store.complete(b, runner: "B", url: "http://b/photo.jpg", content: StoredPhotos.Content(of: [0xFF, 0xD8]), at: t0 + 25)
        #expect(done)
        let runs = try await store.runs(of: id)
        #expect(runs.map(\.runner) == ["A", "B"])
        #expect(runs.map(\.outcome) == ["lease expired", "done"])
        // No two holdings overlap: each ends before (or when) the next starts.
        #expect(zip(runs, runs.dropFirst()).allSatisfy { ($0.endedAt ?? .distantFuture) <= $1.startedAt })
        let ended = try #require(try await store.job(id))
        #expect(ended.state == .done && ended.leaseOwner == nil)
    }

    /// Four runners claiming at once from 20 jobs: every job is claimed exactly once, none twice. (An
    /// hour's lease: on a loaded machine a minute's could run out before the last claim, and a job whose
    /// lease ran out may rightly be claimed again.)
    @Test func concurrentRunnersClaimEachJobOnce() async throws {
        let (store, ids) = try await store(jobs: 20)
        let claimed = await withTaskGroup(of: [String].self) { group in
            for runner in ["A", "B", "C", "D"] {
                group.addTask {
                    var mine: [String] = []
                    while let job = try? await store.claimNext(runner: runner, lease: .seconds(3600)) { mine.append(job.id) }
                    return mine
                }
            }
            return await group.reduce(into: [String]()) { $0 += $1 }
        }
        #expect(claimed.sorted() == ids.sorted(), "each job once: \(claimed.count) claims")
        for id in ids { #expect(try await store.runs(of: id).count == 1) }
    }

    @Test func aJobWaitingForItsGroupIsNotClaimed() async throws {
        let (store, ids) = try await store(jobs: 1)
        try await store.database.write { db in
            try await db.update("photoJob").set("waitsFor", to: "g1").where("id", .equal, ids[0]).run()
        }
        #expect(try await store.claimNext(runner: "A", lease: .seconds(5)) == nil)
        #expect(try await store.claim(ids[0], runner: "A", lease: .seconds(5)) == nil)
        try await store.database.write { db in try await JobStore.release(waitingFor: "g1", db) }
        #expect(try await store.claimNext(runner: "A", lease: .seconds(5))?.id == ids[0])
    }
}
