public import Foundation
import PhotoFiles
import SQLKit

/// The events' outbox, behind named methods (the same SQL on SQLite and PostgreSQL). An event is written by
/// `record`, in the transaction of the change it tells of: it exists exactly when its change does. The delivering
/// services take events under a lease, as the job runners take jobs: in one write transaction, on PostgreSQL with
/// `SELECT … FOR UPDATE SKIP LOCKED` (instances never take the same event), and each only while it is the oldest
/// undelivered event of its subject, so that one user's or one group's events arrive in the order they happened.
public struct Outbox: Sendable {
    let database: AppDatabase

    public init(database: AppDatabase) {
        self.database = database
    }

    // MARK: - Recording (in the change's transaction)

    /// Records `type` about `subject` with `data` (JSON values; nil is null), in the caller's transaction.
    static func record(_ type: EventType, subject: String, data: [String: Any?], at date: Date = Date(), _ db: any SQLDatabase) async throws {
        let stamp = ISO8601DateFormatter.string(from: date, timeZone: TimeZone(identifier: "UTC")!, formatOptions: [.withInternetDateTime, .withFractionalSeconds])
        let envelope: [String: Any] = ["type": type.rawValue, "timestamp": stamp, "data": data.mapValues { $0 ?? NSNull() }]
        let body = try JSONSerialization.data(withJSONObject: envelope, options: [.sortedKeys, .withoutEscapingSlashes])
        let event = OutboxEvent(
            seq: nil, id: "evt_" + randomHex(byteCount: 16), type: type.rawValue, subject: subject, body: String(decoding: body, as: UTF8.self),
            state: .pending, attempts: 0, nextAttemptAt: date, createdAt: date)
        try await db.insert(into: "event").model(event).run()
    }

    /// The subject events about `path` are ordered by: its owner (`user:{id}`), or its group (`group:{id}`).
    static func subject(of path: StoragePath) -> String {
        if case .groupPhoto(let group) = path { return "group:\(group)" }
        return "user:\(path.owner ?? "")"
    }

    // MARK: - Delivering

    /// Takes up to `limit` events that are due, not held by a live lease, and each the oldest undelivered one of its
    /// subject (so no two of one subject), oldest first, for `runner` until `now + lease`, counting the attempt. Asks
    /// with a read first: when nothing is due (most of the time) no write transaction is taken.
    func claimDue(runner: String, lease: Duration, limit: Int = 16, at now: Date = Date()) async throws(ServiceError) -> [OutboxEvent] {
        let due = try await database.read { db in
            try await db.raw("""
                SELECT 1 AS "due" FROM "event" WHERE "state" = 'pending' AND "nextAttemptAt" <= \(bind: now)
                AND ("leaseExpiresAt" IS NULL OR "leaseExpiresAt" < \(bind: now)) LIMIT 1
                """).first() != nil
        }
        guard due else { return [] }
        let kind = database.kind
        return try await database.write { db in
            let lock = kind == .postgres ? "FOR UPDATE SKIP LOCKED" : ""
            var events = try await db.raw("""
                SELECT * FROM "event" e WHERE e."state" = 'pending' AND e."nextAttemptAt" <= \(bind: now)
                AND (e."leaseExpiresAt" IS NULL OR e."leaseExpiresAt" < \(bind: now))
                AND NOT EXISTS (SELECT 1 FROM "event" p WHERE p."subject" = e."subject" AND p."state" = 'pending' AND p."seq" < e."seq")
                ORDER BY e."seq" LIMIT \(unsafeRaw: String(max(limit, 1))) \(unsafeRaw: lock)
                """).all(decoding: OutboxEvent.self)
            guard !events.isEmpty else { return [] }
            let until = now + lease.timeInterval
            try await db.update("event").set("attempts", to: SQLRaw(#""attempts" + 1"#)).set("leaseOwner", to: runner)
                .set("leaseExpiresAt", to: until).where("id", .in, events.map(\.id)).run()
            for index in events.indices {
                events[index].attempts += 1
                events[index].leaseOwner = runner
                events[index].leaseExpiresAt = until
            }
            return events
        }
    }

    /// Records what became of `runner`'s attempts, in one transaction (nothing for an event whose lease was lost
    /// meanwhile: whoever took it over sends it again).
    func settle(_ attempts: [(event: OutboxEvent, action: EventDelivery.Action)], runner: String, at now: Date = Date()) async throws(ServiceError) {
        guard !attempts.isEmpty else { return }
        try await database.write { db in
            for (event, action) in attempts {
                var update = db.update("event").set("leaseOwner", to: SQLLiteral.null).set("leaseExpiresAt", to: SQLLiteral.null)
                switch action {
                case .delivered:
                    update = update.set("state", to: OutboxEvent.State.delivered.rawValue).set("deliveredAt", to: now).set("lastError", to: SQLLiteral.null)
                case .retry(let at, let error):
                    update = update.set("nextAttemptAt", to: at).set("lastError", to: error)
                case .dead(let error):
                    update = update.set("state", to: OutboxEvent.State.dead.rawValue).set("lastError", to: error)
                }
                try await update.where("id", .equal, event.id).where("leaseOwner", .equal, runner).run()
            }
        }
    }

    // MARK: - Reading and mending (`photoprep events`, the API)

    /// The newest `limit` events (in `state`, when given), newest first.
    public func events(in state: OutboxEvent.State? = nil, limit: Int = 100) async throws(ServiceError) -> [OutboxEvent] {
        try await database.read { db in
            var query = db.select().columns("*").from("event")
            if let state { query = query.where("state", .equal, state.rawValue) }
            return try await query.orderBy("seq", .descending).limit(limit).all(decoding: OutboxEvent.self)
        }
    }

    /// The event with `id`, if it is kept.
    public func event(_ id: String) async throws(ServiceError) -> OutboxEvent? {
        try await database.read { db in try await db.select().columns("*").from("event").where("id", .equal, id).first(decoding: OutboxEvent.self) }
    }

    /// How many events are in each state.
    public func counts() async throws(ServiceError) -> [OutboxEvent.State: Int] {
        try await database.read { db in
            let rows = try await db.select().column("state").column(SQLFunction("COUNT", args: SQLLiteral.all), as: "count").from("event")
                .groupBy("state").all()
            var counts = Dictionary(uniqueKeysWithValues: OutboxEvent.State.allCases.map { ($0, 0) })
            for row in rows {
                guard let state = OutboxEvent.State(rawValue: try row.decode(column: "state", as: String.self)) else { continue }
                counts[state] = try row.decode(column: "count", as: Int.self)
            }
            return counts
        }
    }

    /// Sends the events `ids` again (dead ones, or delivered ones: a replay, under the same `webhook-id`), from a
    /// first attempt now; or, with `ids` nil, every dead event. Returns the ids made pending.
    public func resend(_ ids: [String]?, at now: Date = Date()) async throws(ServiceError) -> [String] {
        try await database.write { db in
            var update = db.update("event").set("state", to: OutboxEvent.State.pending.rawValue).set("attempts", to: 0)
                .set("nextAttemptAt", to: now).set("deliveredAt", to: SQLLiteral.null)
            if let ids {
                update = update.where("id", .in, ids).where("state", .notEqual, OutboxEvent.State.pending.rawValue)
            } else {
                update = update.where("state", .equal, OutboxEvent.State.dead.rawValue)
            }
            return try await update.returning("id").all(decodingColumn: "id", as: String.self)
        }
    }

    /// Deletes the delivered and dead events recorded before `date` (and the pending ones too with `undelivered`: when
    /// nobody receives them). Returns how many.
    @discardableResult
    public func prune(recordedBefore date: Date, undelivered: Bool = false) async throws(ServiceError) -> Int {
        try await database.write { db in
            var delete = db.delete(from: "event").where("createdAt", .lessThan, date)
            if !undelivered { delete = delete.where("state", .notEqual, OutboxEvent.State.pending.rawValue) }
            return try await delete.returning("id").all().count
        }
    }
}
