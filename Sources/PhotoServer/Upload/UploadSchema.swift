import PhotoServices
import SQLKit

/// The server's own tables in the services' database (`AppDatabase.open(…, also: UploadSchema.migrations)`): the
/// uploads in progress that several `photoprep serve` instances share (`SharedUploadStore`). Add a new migration at
/// the end; never change one that shipped.
enum UploadSchema {
    static let migrations = [
        SchemaMigration(name: "uploads v1: shared partial uploads", shippedAs: "v5: shared partial uploads", run: v1),
        SchemaMigration(name: "uploads v2: a stored upload's location only in its stored photo's record", run: v2),
    ]

    private static func v1(_ db: any SQLDatabase) async throws {
        // `photoprep serve` on several machines: the tus uploads in progress (their bytes are objects in
        // the bucket, one per durable piece), and who is finishing one under a lease, with a history.
        try await db.create(table: "tusUpload")
            .column("id", type: .text, .primaryKey(autoIncrement: false))
            .column("owner", type: .text, .notNull)
            .column("ownerName", type: .text)
            .column("key", type: .text, .notNull)
            .column("length", type: .bigint, .notNull)
            .column("metadata", type: .text, .notNull)  // JSON object
            .column("createdAt", type: .timestamp, .notNull)
            .column("expiresAt", type: .timestamp, .notNull)
            .column("state", type: .text, .notNull)  // receiving, stored
            .column("url", type: .text)
            .column("received", type: .bigint, .notNull)  // bytes in durable pieces, from 0 without a gap
            .column("finishOwner", type: .text)
            .column("finishLeaseExpiresAt", type: .timestamp)
            .run()
        try await db.create(table: "tusUploadPiece")
            .column("upload", type: .text, .notNull, .references("tusUpload", "id", onDelete: .cascade))
            .column("start", type: .bigint, .notNull)
            .column("length", type: .bigint, .notNull)
            .column("objectKey", type: .text, .notNull)
            .primaryKey("upload", "start")
            .run()
        try await db.create(table: "tusUploadFinish")
            .column("id", type: .bigint, .primaryKey(autoIncrement: true))
            .column("upload", type: .text, .notNull)
            .column("runner", type: .text, .notNull)
            .column("startedAt", type: .timestamp, .notNull)
            .column("endedAt", type: .timestamp)
            .column("outcome", type: .text)
            .run()
        try await db.create(index: "tusUploadFinish_upload").on("tusUploadFinish").column("upload").run()
    }

    private static func v2(_ db: any SQLDatabase) async throws {
        // A stored upload's photo is found by its key: where it is stored is the stored photo's record's to say.
        try await db.raw("ALTER TABLE \(ident: "tusUpload") DROP COLUMN \(ident: "url")").run()
    }
}
