import Foundation
import SQLKit

/// The schema, as migrations run in order on SQLite and PostgreSQL alike (SQLKit's schema builders
/// speak both), in modules: each role's database gets the modules it uses and no others (`Role`). Each
/// migration runs once, in the transaction that records it in `schemaMigration`. Add a new one at the
/// end of its module; never change one that shipped.
enum Schema {
    typealias Migration = SchemaMigration

    /// The services' own records: users, groups, members, messages, notifications, album photos.
    static let services = [
        Migration(name: "services v1: users, groups, messages, notifications, album photos", shippedAs: legacyV1, run: servicesV1),
        Migration(name: "services v2: stored photos' versions and download tokens", shippedAs: "", run: servicesV2),
        Migration(name: "services v3: each group's creation, to tell a resent creation from another", shippedAs: "", run: servicesV3),
        Migration(name: "services v4: each stored photo's perceptual quality score", shippedAs: "", run: servicesV4),
        Migration(name: "services v5: each stored photo's placeholder, capture time and focal point, its thumbnails' WebPs", shippedAs: "", run: servicesV5),
        Migration(name: "services v6: a stored photo's location recorded once, in its stored photo's row", shippedAs: "", run: servicesV6),
        Migration(name: "services v7: storage quotas: each stored photo's owner, users' own quotas", shippedAs: "", run: servicesV7),
        Migration(name: "services v8: the events' outbox", shippedAs: "", run: servicesV8),
        Migration(name: "services v9: who uploaded each stored photo, and the photos the app's review quarantined", shippedAs: "", run: servicesV9),
    ]
    /// The photo jobs (embedded services and clients alike), their runs, and replaced objects still to delete.
    static let jobs = [
        Migration(name: "jobs v1: photo jobs", shippedAs: legacyV1, run: jobsV1),
        Migration(name: "jobs v2: jobs waiting for their group", shippedAs: "v2: offline-first client", run: jobsV2),
        Migration(name: "jobs v3: stale objects", shippedAs: "v3: stale objects", run: jobsV3),
        Migration(name: "jobs v4: photo job runs", shippedAs: "v4: photo job runs", run: jobsV4),
        Migration(name: "jobs v5: each job's destination", shippedAs: "", run: jobsV5),
        Migration(name: "jobs v6: each job's focal point", shippedAs: "", run: jobsV6),
    ]
    /// A client of `photoprep serve`: the groups it created while the server was unreachable.
    static let client = [Migration(name: "client v1: groups waiting for the server", shippedAs: "v2: offline-first client", run: clientV1)]
    private static let legacyV1 = "v1: users, groups, messages, notifications, album photos, photo jobs"

    static func migrate(_ db: any SQLDatabase, kind: AppDatabase.Kind, _ migrations: [Migration]) async throws {
        if kind == .postgres {
            // Instances started together: one migrates, the others wait here and find it done.
            try await db.raw("SELECT pg_advisory_xact_lock(7270818)").run()
        }
        try await db.create(table: "schemaMigration").ifNotExists()
            .column("name", type: .text, .primaryKey(autoIncrement: false))
            .column("appliedAt", type: .timestamp, .notNull)
            .run()
        let applied = Set(try await db.select().column("name").from("schemaMigration").all(decodingColumn: "name", as: String.self))
        for migration in migrations where !applied.contains(migration.name) && !applied.contains(migration.shippedAs) {
            try await migration.run(db)
            try await db.insert(into: "schemaMigration").columns("name", "appliedAt").values(SQLBind(migration.name), SQLBind(Date())).run()
        }
    }

    static let boolean = SQLDataType.custom(SQLRaw("BOOLEAN"))

    private static func servicesV1(_ db: any SQLDatabase) async throws {
        try await db.create(table: "user")
            .column("id", type: .text, .primaryKey(autoIncrement: false))
            .column("displayName", type: .text, .notNull)
            .column("email", type: .text)
            .column("profilePhotoURL", type: .text)
            .column("profilePhotoKey", type: .text)
            .column("createdAt", type: .timestamp, .notNull)
            .run()
        try await db.create(table: "chatGroup")
            .column("id", type: .text, .primaryKey(autoIncrement: false))
            .column("name", type: .text, .notNull)
            .column("createdBy", type: .text, .notNull, .references("user", "id"))
            .column("photoURL", type: .text)
            .column("photoState", type: .text, .notNull)  // none, pending, uploading, done, failed, cancelled
            .column("photoError", type: .text)
            .column("createdAt", type: .timestamp, .notNull)
            .column("updatedAt", type: .timestamp, .notNull)
            .run()
        try await db.create(table: "groupMember")
            .column("groupId", type: .text, .notNull, .references("chatGroup", "id", onDelete: .cascade))
            .column("userId", type: .text, .notNull, .references("user", "id"))
            .column("isAdmin", type: boolean, .notNull)
            .primaryKey("groupId", "userId")
            .run()
        try await db.create(index: "groupMember_userId").on("groupMember").column("userId").run()
        try await db.create(table: "message")
            .column("id", type: .bigint, .primaryKey(autoIncrement: true))
            .column("groupId", type: .text, .notNull, .references("chatGroup", "id", onDelete: .cascade))
            .column("sender", type: .text, .notNull)
            .column("text", type: .text, .notNull)
            .column("isSystem", type: boolean, .notNull)
            .column("createdAt", type: .timestamp, .notNull)
            .run()
        try await db.create(index: "message_groupId").on("message").column("groupId").run()
        try await db.create(table: "notification")
            .column("id", type: .bigint, .primaryKey(autoIncrement: true))
            .column("userId", type: .text, .notNull, .references("user", "id"))
            .column("groupId", type: .text, .notNull, .references("chatGroup", "id", onDelete: .cascade))
            .column("kind", type: .text, .notNull)
            .column("deepLink", type: .text, .notNull)
            .column("createdAt", type: .timestamp, .notNull)
            .run()
        try await db.create(index: "notification_userId").on("notification").column("userId").run()
        try await db.create(table: "albumPhoto")
            .column("id", type: .text, .primaryKey(autoIncrement: false))
            .column("userId", type: .text, .notNull, .references("user", "id"))
            .column("album", type: .text, .notNull)
            .column("key", type: .text, .notNull)
            .column("url", type: .text)
            .column("state", type: .text, .notNull)
            .column("createdAt", type: .timestamp, .notNull)
            .run()
        try await db.create(index: "albumPhoto_key").on("albumPhoto").column("key").run()
    }

    private static func servicesV2(_ db: any SQLDatabase) async throws {
        // Every stored photo's version (its content's SHA-256) and download token, by key: what the read
        // path serves and what its download URLs name.
        try await db.create(table: "storedPhoto")
            .column("key", type: .text, .primaryKey(autoIncrement: false))
            .column("location", type: .text, .notNull)
            .column("sha256", type: .text, .notNull)
            .column("size", type: .bigint, .notNull)
            .column("token", type: .text, .notNull)
            .column("storedAt", type: .timestamp, .notNull)
            .run()
        // Its thumbnails, made on arrival: one per long edge, stored beside it.
        try await db.create(table: "storedThumbnail")
            .column("key", type: .text, .notNull, .references("storedPhoto", "key", onDelete: .cascade))
            .column("edge", type: .bigint, .notNull)
            .column("width", type: .bigint, .notNull)
            .column("height", type: .bigint, .notNull)
            .column("location", type: .text, .notNull)
            .column("sha256", type: .text, .notNull)
            .column("size", type: .bigint, .notNull)
            .primaryKey("key", "edge")
            .run()
    }

    private static func servicesV3(_ db: any SQLDatabase) async throws {
        // What a group was created with (its name and other participants, as a digest): a creation sent again with
        // the group's id (or Idempotency-Key) is answered with the group only when it is that creation.
        try await db.create(table: "groupCreation")
            .column("groupId", type: .text, .primaryKey(autoIncrement: false), .references("chatGroup", "id", onDelete: .cascade))
            .column("digest", type: .text, .notNull)
            .run()
    }

    private static func servicesV4(_ db: any SQLDatabase) async throws {
        // The SSIMULACRA2 score the photo was encoded to (`PrepareReport.score`); none for a photo kept as it arrived.
        try await db.alter(table: "storedPhoto").column("score", type: .real).run()
    }

    private static func servicesV5(_ db: any SQLDatabase) async throws {
        // The ThumbHash in base64 (`PrepareReport.placeholder`); the capture time as the photo's EXIF said it, with its
        // offset (ISO 8601), and as an instant, which albums are listed by. One column a statement: SQLite adds no more.
        try await db.alter(table: "storedPhoto").column("placeholder", type: .text).run()
        try await db.alter(table: "storedPhoto").column("takenAt", type: .text).run()
        try await db.alter(table: "storedPhoto").column("takenAtUTC", type: .timestamp).run()
        // The focal point its square thumbnails are centred on (`FocalPoint`, as given), when the client gave one.
        try await db.alter(table: "storedPhoto").column("focus", type: .text).run()
        // A thumbnail's WebP, when one was made (`Thumbnail.webp`).
        try await db.alter(table: "storedThumbnail").column("webpLocation", type: .text).run()
        try await db.alter(table: "storedThumbnail").column("webpSha256", type: .text).run()
        try await db.alter(table: "storedThumbnail").column("webpSize", type: .bigint).run()
    }

    private static func servicesV6(_ db: any SQLDatabase) async throws {
        // One recorded location: a stored photo's is in its `storedPhoto` row alone, and the group, the user and the
        // album photo find it by key — a group's photo is at `group_photos/{id}/photo.jpg`, a user's at
        // `profilePhotoKey`, an album photo's at its own `key`. A photo recorded before stored photos had rows (a
        // location without one) gets its row first: its content unknown (no version, size 0), it is found, listed
        // and deleted as before, and served once it is replaced.
        let token = db.dialect.name == "sqlite" ? "lower(hex(randomblob(16)))" : "md5(random()::text || clock_timestamp()::text)"
        let recorded = [
            #"SELECT 'group_photos/' || "id" || '/photo.jpg' AS "key", "photoURL" AS "location" FROM "chatGroup" WHERE "photoURL" IS NOT NULL"#,
            #"SELECT "profilePhotoKey" AS "key", "profilePhotoURL" AS "location" FROM "user" WHERE "profilePhotoURL" IS NOT NULL AND "profilePhotoKey" IS NOT NULL"#,
            #"SELECT "key", "url" AS "location" FROM "albumPhoto" WHERE "url" IS NOT NULL"#,
        ]
        let now = Date()
        for select in recorded {
            try await db.raw("""
                INSERT INTO "storedPhoto" ("key", "location", "sha256", "size", "token", "storedAt")
                SELECT "key", MIN("location"), '', 0, \(unsafeRaw: token), \(bind: now) FROM (\(unsafeRaw: select)) AS "recorded"
                WHERE "key" NOT IN (SELECT "key" FROM "storedPhoto") GROUP BY "key"
                """).run()
        }
        for (table, column) in [("chatGroup", "photoURL"), ("user", "profilePhotoURL"), ("albumPhoto", "url")] {
            try await db.raw("ALTER TABLE \(ident: table) DROP COLUMN \(ident: column)").run()
        }
    }

    private static func servicesV7(_ db: any SQLDatabase) async throws {
        // Whose quota a stored photo counts in (`StoragePath.owner`; none for a group's), indexed: a user's usage is read
        // on every upload, without reading anyone else's photos.
        try await db.alter(table: "storedPhoto").column("owner", type: .text).run()
        try await db.create(index: "storedPhoto_owner").on("storedPhoto").column("owner").run()
        let keys = try await db.select().column("key").from("storedPhoto").all(decodingColumn: "key", as: String.self)
        for key in keys {
            guard let owner = (try? StoragePath(key: key))?.owner else { continue }
            try await db.update("storedPhoto").set("owner", to: owner).where("key", .equal, key).run()
        }
        // A user's own storage quota (`photoprep user quota`); the server's setting holds for everyone without one.
        try await db.create(table: "userQuota")
            .column("userId", type: .text, .primaryKey(autoIncrement: false))
            .column("bytes", type: .bigint, .notNull)
            .column("photos", type: .bigint, .notNull)
            .column("setAt", type: .timestamp, .notNull)
            .run()
    }

    private static func servicesV8(_ db: any SQLDatabase) async throws {
        // Each change's event (`OutboxEvent`), written in the change's transaction, until delivered and kept a while.
        try await db.create(table: "event")
            .column("seq", type: .bigint, .primaryKey(autoIncrement: true))
            .column("id", type: .text, .notNull, .unique)
            .column("type", type: .text, .notNull)
            .column("subject", type: .text, .notNull)
            .column("body", type: .text, .notNull)
            .column("state", type: .text, .notNull)  // pending, delivered, dead
            .column("attempts", type: .bigint, .notNull)
            .column("nextAttemptAt", type: .timestamp, .notNull)
            .column("lastError", type: .text)
            .column("leaseOwner", type: .text)
            .column("leaseExpiresAt", type: .timestamp)
            .column("createdAt", type: .timestamp, .notNull)
            .column("deliveredAt", type: .timestamp)
            .run()
        // The delivering services' questions: the oldest pending events; the oldest pending one of a subject.
        try await db.create(index: "event_state_seq").on("event").column("state").column("seq").run()
        try await db.create(index: "event_subject_seq").on("event").column("subject").column("seq").run()
        try await db.create(index: "event_createdAt").on("event").column("createdAt").run()
    }

    private static func servicesV9(_ db: any SQLDatabase) async throws {
        // Who uploaded a stored photo, and why the app's review quarantined it (`StoredPhoto.quarantine`; NULL: it did not).
        try await db.alter(table: "storedPhoto").column("uploadedBy", type: .text).run()
        try await db.alter(table: "storedPhoto").column("quarantine", type: .text).run()
    }

    private static func jobsV1(_ db: any SQLDatabase) async throws {
        try await db.create(table: "photoJob")
            .column("id", type: .text, .primaryKey(autoIncrement: false))
            .column("kind", type: .text, .notNull)  // group, profile, album
            .column("caller", type: .text, .notNull)
            .column("subject", type: .text, .notNull)  // group id, user id or album photo id
            .column("key", type: .text, .notNull)
            .column("preset", type: .text, .notNull)
            .column("originalPath", type: .text, .notNull)
            .column("preparedPath", type: .text)
            .column("state", type: .text, .notNull)
            .column("error", type: .text)
            .column("attempts", type: .bigint, .notNull)
            .column("url", type: .text)
            // Where the upload stands at the destination (the uploader's `.started(location:)`) and the
            // bytes it acknowledged.
            .column("uploadLocation", type: .text)
            .column("uploadedBytes", type: .bigint, .notNull)
            // Who runs it (a runner's random id) and until when, unless renewed: a lease, not a process id.
            .column("leaseOwner", type: .text)
            .column("leaseExpiresAt", type: .timestamp)
            .column("createdAt", type: .timestamp, .notNull)
            .column("updatedAt", type: .timestamp, .notNull)
            .run()
        try await db.create(index: "photoJob_state").on("photoJob").column("state").run()
    }

    private static func jobsV2(_ db: any SQLDatabase) async throws {
        // A client's group photo waits until the server has its group.
        try await db.alter(table: "photoJob").column("waitsFor", type: .text).run()
    }

    private static func clientV1(_ db: any SQLDatabase) async throws {
        // A client of `photoprep serve` keeps the groups it created while the server was unreachable.
        try await db.create(table: "pendingGroup")
            .column("id", type: .text, .primaryKey(autoIncrement: false))
            .column("name", type: .text, .notNull)
            .column("participants", type: .text, .notNull)  // JSON array of user ids
            .column("photoJob", type: .text)
            .column("state", type: .text, .notNull)  // pending, created, refused
            .column("error", type: .text)
            .column("attempts", type: .bigint, .notNull)
            .column("createdAt", type: .timestamp, .notNull)
            .column("updatedAt", type: .timestamp, .notNull)
            .run()
    }

    private static func jobsV3(_ db: any SQLDatabase) async throws {
        // Stored objects that should be gone (a replaced profile picture) but could not be deleted yet.
        try await db.create(table: "staleObject")
            .column("url", type: .text, .primaryKey(autoIncrement: false))
            .column("caller", type: .text, .notNull)
            .column("error", type: .text, .notNull)
            .column("attempts", type: .bigint, .notNull)
            .column("updatedAt", type: .timestamp, .notNull)
            .run()
    }

    private static func jobsV6(_ db: any SQLDatabase) async throws {
        // The focal point a client sends with a photo's upload (tus metadata, the draft's query). NULL: none.
        try await db.alter(table: "photoJob").column("focus", type: .text).run()
    }

    private static func jobsV5(_ db: any SQLDatabase) async throws {
        // Where a job's photo goes, as given when it was created: a later process with another destination
        // leaves it alone. NULL: created before this column, runs wherever it is run.
        try await db.alter(table: "photoJob").column("destination", type: .text).run()
    }

    private static func jobsV4(_ db: any SQLDatabase) async throws {
        // Every time a runner held a job: who, from when to when, how it ended. "No job runs twice at
        // once" is checked against this history.
        try await db.create(table: "photoJobRun")
            .column("id", type: .bigint, .primaryKey(autoIncrement: true))
            .column("job", type: .text, .notNull, .references("photoJob", "id", onDelete: .cascade))
            .column("runner", type: .text, .notNull)
            .column("startedAt", type: .timestamp, .notNull)
            .column("endedAt", type: .timestamp)
            .column("outcome", type: .text)
            .run()
        try await db.create(index: "photoJobRun_job").on("photoJobRun").column("job").run()
    }
}

/// A value bound as itself, or SQL `NULL` when nil (what `set(_:to:)` needs to clear a column on both databases).
func bindOrNull(_ value: String?) -> any SQLExpression {
    value.map { SQLBind($0) } ?? SQLLiteral.null
}
