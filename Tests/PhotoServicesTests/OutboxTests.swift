import Foundation
import SQLKit
@testable import PhotoServices
import Testing
import TestSupport

/// The events' outbox: written with the change it tells of, taken one at a time in order per subject, signed as
/// Standard Webhooks do; what an attempt's outcome leads to. On SQLite, and on PostgreSQL with
/// `PHOTOPREP_TEST_DATABASE=postgres`.
@Suite struct OutboxTests {
    /// Standard Webhooks' published example (its libraries' tests; the `standardwebhooks` package on PyPI signs it alike).
    @Test func signaturesAreStandardWebhooksOnesUnderEachSecret() throws {
        let body = Data(#"{"test": 2432232314}"#.utf8)
        let one = try WebhookSigner(secrets: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"])
        #expect(one.signature(id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1614265330, body: body) == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
        let fresh = WebhookSigner.newSecret()
        let two = try WebhookSigner(secrets: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", fresh])
        let both = two.signature(id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1614265330, body: body).split(separator: " ")
        #expect(both.count == 2 && both[0] == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=" && both[1].hasPrefix("v1,") && both[0] != both[1])
        #expect(throws: WebhookSigner.BadSecret.self) { try WebhookSigner(secrets: ["whsec_c2hvcnQ="]) }  // "short": 5 bytes
        #expect(throws: WebhookSigner.BadSecret.self) { try WebhookSigner(secrets: ["not base64 at all!"]) }
        #expect(throws: WebhookSigner.BadSecret.self) { try WebhookSigner(secrets: []) }
    }

    /// 2xx delivers; anything else waits 1 s, 2 s, 4 s … (at most the cap, stretched by at most a fifth) until the last attempt, which is dead.
    @Test func failedAttemptsBackOffUntilTheLastIsDead() {
        let policy = EventDelivery(maxAttempts: 5, firstDelay: .seconds(1), maxDelay: .seconds(5))
        let now = Date(timeIntervalSince1970: 1_000_000)
        #expect(policy.next(after: .answered(204), attempts: 5, at: now) == .delivered)
        #expect(policy.next(after: .answered(500), attempts: 1, at: now) == .retry(at: now + 1, error: "the receiver answered 500"))
        #expect(policy.next(after: .failed("refused"), attempts: 3, at: now) == .retry(at: now + 4, error: "refused"))
        #expect(policy.next(after: .answered(410), attempts: 4, at: now) == .retry(at: now + 5, error: "the receiver answered 410"))
        #expect(policy.next(after: .answered(301), attempts: 5, at: now) == .dead(error: "the receiver answered 301 (attempt 5 of 5)"))
        #expect(policy.next(after: .answered(500), attempts: 2, at: now, jitter: 0.999) == .retry(at: now + 2 * 1.1998, error: "the receiver answered 500"))
        #expect((1...5).map { policy.delay(after: $0) } == [.seconds(1), .seconds(2), .seconds(4), .seconds(5), .seconds(5)])
    }

    static func events(_ database: AppDatabase) async throws -> [OutboxEvent] {
        try await Outbox(database: database).events(limit: 1000).reversed()
    }

    static func data(_ event: OutboxEvent) throws -> [String: Any] {
        let body = try #require(try JSONSerialization.jsonObject(with: Data(event.body.utf8)) as? [String: Any])
        #expect(body["type"] as? String == event.type && body["timestamp"] is String)
        return try #require(body["data"] as? [String: Any])
    }

    /// A group's creation and a photo's recording write their events in the same transaction; a recording the quota
    /// refuses leaves none (its transaction rolled back with them).
    @Test func changesWriteTheirEventsAndRefusedOnesNone() async throws {
        let harness = try await Harness()
        let database = harness.services.database
        let group = try await harness.services.groups.createGroup(creator: "u1", name: "Trip", participants: ["u2", "u3"]).group.id
        try await database.write { db in try await QuotaTests.record("user_photos/u1/trip/1.jpg", quota: .standard, db) }
        let refused = await #expect(throws: ServiceError.self) {
            try await database.write { db in try await QuotaTests.record("user_photos/u1/trip/2.jpg", quota: StorageQuota(bytes: 1 << 30, photos: 1), db) }
        }
        guard case .overQuota? = refused else { Issue.record("\(String(describing: refused))"); return }
        let events = try await Self.events(database)
        #expect(events.map(\.type) == ["group.created", "photo.stored", "album.photoAdded"], "\(events)")
        #expect(events.map(\.subject) == ["group:\(group)", "user:u1", "user:u1"])
        let created = try Self.data(events[0])
        #expect(created["name"] as? String == "Trip" && created["createdBy"] as? String == "u1" && created["members"] as? [String] == ["u1", "u2", "u3"])
        let stored = try Self.data(events[1])
        #expect(stored["key"] as? String == "user_photos/u1/trip/1.jpg" && stored["size"] as? Int == 3 && stored["owner"] as? String == "u1", "\(stored)")
        #expect(Set(events.map(\.id)).count == 3 && events.allSatisfy { $0.state == .pending && $0.attempts == 0 && $0.id.hasPrefix("evt_") })
        // The same key again is a replacement: no album photo added.
        try await database.write { db in try await QuotaTests.record("user_photos/u1/trip/1.jpg", quota: .standard, db) }
        #expect(try await Self.events(database).suffix(1).map(\.type) == ["photo.replaced"])
    }

    /// A group renamed, its members changed (a change that changes nothing writes no event; one refused writes none),
    /// a user renamed: each with its event, in the group's or the user's order.
    @Test func renamesAndMemberChangesWriteTheirEvents() async throws {
        let harness = try await Harness()
        let services = harness.services
        let group = try await services.groups.createGroup(creator: "u1", name: "Trip", participants: ["u2", "u3"]).group.id
        try await services.groups.rename(caller: "u1", groupId: group, to: "  Trip 2026 ")
        try await services.groups.changeMembers(caller: "u1", groupId: group, add: ["u4", "u2"], remove: ["u3"])
        try await services.groups.changeMembers(caller: "u1", groupId: group, add: ["u2"], remove: [])
        await #expect(throws: ServiceError.self) { try await services.groups.rename(caller: "u2", groupId: group, to: "Mine") }
        try await services.users.rename("u2", to: "Ben")
        let events = try await Self.events(services.database)
        #expect(events.map(\.type) == ["group.created", "group.renamed", "group.membersChanged", "user.renamed"], "\(events.map(\.type))")
        #expect(try Self.data(events[1])["name"] as? String == "Trip 2026" && events[1].subject == "group:\(group)")
        let changed = try Self.data(events[2])
        #expect(changed["added"] as? [String] == ["u4"] && changed["removed"] as? [String] == ["u3"] && changed["members"] as? [String] == ["u1", "u2", "u4"], "\(changed)")
        #expect(try Self.data(events[3])["displayName"] as? String == "Ben" && events[3].subject == "user:u2")
    }

    /// Events are taken oldest first, one at a time per subject: the next of a subject waits until the one before it is
    /// delivered (or dead); another subject's goes meanwhile. A settled attempt counts; a lapsed lease lets another take it.
    @Test func eventsOfOneSubjectGoInOrderOthersDoNotWait() async throws {
        let harness = try await Harness()
        let database = harness.services.database
        let outbox = Outbox(database: database)
        try await database.write { db in
            try await Outbox.record(.photoStored, subject: "user:a", data: ["n": 1], db)
            try await Outbox.record(.albumPhotoAdded, subject: "user:a", data: ["n": 2], db)
            try await Outbox.record(.photoStored, subject: "user:b", data: ["n": 3], db)
        }
        let all = try await Self.events(database)
        // A batch takes the head of each subject: user:a's first and user:b's, not user:a's second.
        #expect(try await outbox.claimDue(runner: "r0", lease: .seconds(30), at: Date() - 60).map(\.id) == [], "nothing due a minute ago")
        let heads = try await outbox.claimDue(runner: "r0", lease: .seconds(1))
        #expect(heads.map(\.id) == [all[0].id, all[2].id] && heads.allSatisfy { $0.attempts == 1 && $0.leaseOwner == "r0" })
        try await outbox.settle(heads.map { ($0, .retry(at: Date(), error: "test")) }, runner: "r0")
        let first = try #require(try await outbox.claimDue(runner: "r1", lease: .seconds(30), limit: 1).first)
        #expect(first.id == all[0].id && first.attempts == 2 && first.leaseOwner == "r1")
        let other = try #require(try await outbox.claimDue(runner: "r2", lease: .seconds(30), limit: 1).first)
        #expect(other.id == all[2].id, "user:a's second waits for its first; user:b's goes")
        #expect(try await outbox.claimDue(runner: "r2", lease: .seconds(30), limit: 1).first == nil)
        // r1's attempt failed: retried a second from now, still before the second of its subject.
        try await outbox.settle([(first, .retry(at: Date() + 1, error: "the receiver answered 500"))], runner: "r1")
        #expect(try await outbox.claimDue(runner: "r2", lease: .seconds(30), limit: 1).first == nil)
        let again = try #require(try await outbox.claimDue(runner: "r2", lease: .seconds(30), limit: 1, at: Date() + 2).first)
        #expect(again.id == all[0].id && again.attempts == 3)
        // r2 vanished: its lease lapses, r3 takes the event over; r2's late answer is not recorded.
        let takenOver = try #require(try await outbox.claimDue(runner: "r3", lease: .seconds(30), limit: 1, at: Date() + 40).first)
        #expect(takenOver.id == all[0].id && takenOver.attempts == 4)
        try await outbox.settle([(again, .delivered)], runner: "r2")
        #expect(try await outbox.event(all[0].id)?.state == .pending)
        try await outbox.settle([(takenOver, .delivered)], runner: "r3")
        let delivered = try #require(try await outbox.event(all[0].id))
        #expect(delivered.state == .delivered && delivered.deliveredAt != nil && delivered.lastError == nil && delivered.leaseOwner == nil)
        let second = try #require(try await outbox.claimDue(runner: "r3", lease: .seconds(30), limit: 1, at: Date() + 40).first)
        #expect(second.id == all[1].id)
        try await outbox.settle([(second, .dead(error: "the receiver answered 500 (attempt 16 of 16)"))], runner: "r3")
        #expect(try await outbox.counts() == [.pending: 1, .delivered: 1, .dead: 1])
        // Sent again: the dead one (all dead ones), then a delivered one by id (a replay); a pending one is not "again".
        #expect(try await outbox.resend(nil) == [all[1].id])
        #expect(try await outbox.resend([all[0].id, all[2].id]) == [all[0].id])
        let resent = try #require(try await outbox.event(all[0].id))
        #expect(resent.state == .pending && resent.attempts == 0 && resent.deliveredAt == nil)
        // Kept a while: old delivered and dead events go; pending ones stay unless nobody receives them.
        #expect(try await outbox.prune(recordedBefore: Date() + 60) == 0)
        #expect(try await outbox.prune(recordedBefore: Date() + 60, undelivered: true) == 3)
    }

    /// PostgreSQL: an event another instance is claiming at this moment (its row locked) is skipped, not waited for.
    @Test(.enabled(if: PostgresCluster.selected)) func aClaimSkipsEventsAnotherInstanceIsClaiming() async throws {
        let harness = try await Harness()
        let database = harness.services.database
        try await database.write { db in
            try await Outbox.record(.photoStored, subject: "user:a", data: [:], db)
            try await Outbox.record(.photoStored, subject: "user:b", data: [:], db)
        }
        let all = try await Self.events(database)
        let locked = AsyncStream<Void>.makeStream()
        async let holding: Void = database.write { db in
            try await db.raw("SELECT * FROM \"event\" WHERE \"id\" = \(bind: all[0].id) FOR UPDATE").run()
            locked.continuation.yield()
            try await Task.sleep(for: .seconds(2))
        }
        for await _ in locked.stream { break }
        let claimed = try await Outbox(database: database).claimDue(runner: "r2", lease: .seconds(30)).first
        #expect(claimed?.id == all[1].id, "the locked event skipped (without SKIP LOCKED: waited for, then taken)")
        try await holding
    }
}
