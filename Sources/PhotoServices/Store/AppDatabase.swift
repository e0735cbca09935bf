import Foundation
public import GRDB

/// The services' SQLite database (GRDB): users, groups and their members, messages, notifications,
/// album photos and the photo uploads in flight. Schema changes are migrations, from the first version on.
public struct AppDatabase: Sendable {
    public let writer: any DatabaseWriter

    /// A database file (WAL mode, so readers never block the writer; several processes may share it).
    /// A new file is created owner-only (0600, in a new folder 0700; SQLite gives its WAL and shared-memory
    /// files the database's mode): it holds users, groups and messages.
    public init(path: String) throws(ServiceError) {
        do {
            try FileManager.default.createDirectory(
                at: URL(fileURLWithPath: path).deletingLastPathComponent(), withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
            let fd = open(path, O_WRONLY | O_CREAT, 0o600)
            if fd >= 0 { close(fd) }
            var configuration = Configuration()
            configuration.busyMode = .timeout(10)
            try self.init(writer: DatabasePool(path: path, configuration: configuration))
        } catch let error as ServiceError {
            throw error
        } catch {
            throw .storage("\(path): \(error)")
        }
    }

    /// An in-memory database, for fast tests and throwaway demos.
    public static func inMemory() throws(ServiceError) -> AppDatabase {
        do { return try AppDatabase(writer: DatabaseQueue()) } catch { throw .storage("\(error)") }
    }

    init(writer: any DatabaseWriter) throws(ServiceError) {
        self.writer = writer
        do { try Self.migrator.migrate(writer) } catch { throw .storage("migrating the schema: \(error)") }
    }

    /// Runs `body` in a read transaction; SQLite's errors become `ServiceError.storage`.
    public func read<T>(_ body: (Database) throws -> T) throws(ServiceError) -> T {
        do {
            return try writer.read(body)
        } catch let error as ServiceError {
            throw error
        } catch {
            throw .storage("\(error)")
        }
    }

    /// Runs `body` in a write transaction (all or nothing), keeping the `ServiceError`s it throws.
    public func write<T>(_ body: (Database) throws -> T) throws(ServiceError) -> T {
        do {
            return try writer.write(body)
        } catch let error as ServiceError {
            throw error
        } catch {
            throw .storage("\(error)")
        }
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.create(table: "user") { t in
                t.primaryKey("id", .text)
                t.column("displayName", .text).notNull()
                t.column("email", .text)
                t.column("profilePhotoURL", .text)
                t.column("profilePhotoKey", .text)
                t.column("createdAt", .datetime).notNull()
            }
            try db.create(table: "chatGroup") { t in
                t.primaryKey("id", .text)
                t.column("name", .text).notNull()
                t.column("createdBy", .text).notNull().references("user")
                t.column("photoURL", .text)
                t.column("photoState", .text).notNull()  // none, pending, uploading, done, failed, cancelled
                t.column("photoError", .text)
                t.column("createdAt", .datetime).notNull()
                t.column("updatedAt", .datetime).notNull()
            }
            try db.create(table: "groupMember") { t in
                t.column("groupId", .text).notNull().references("chatGroup", onDelete: .cascade)
                t.column("userId", .text).notNull().references("user")
                t.column("isAdmin", .boolean).notNull()
                t.primaryKey(["groupId", "userId"])
            }
            try db.create(table: "message") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("groupId", .text).notNull().references("chatGroup", onDelete: .cascade)
                t.column("sender", .text).notNull()
                t.column("text", .text).notNull()
                t.column("isSystem", .boolean).notNull()
                t.column("createdAt", .datetime).notNull()
            }
            try db.create(table: "notification") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("userId", .text).notNull().references("user")
                t.column("groupId", .text).notNull().references("chatGroup", onDelete: .cascade)
                t.column("kind", .text).notNull()
                t.column("deepLink", .text).notNull()
                t.column("createdAt", .datetime).notNull()
            }
            try db.create(table: "albumPhoto") { t in
                t.primaryKey("id", .text)
                t.column("userId", .text).notNull().references("user")
                t.column("album", .text).notNull()
                t.column("key", .text).notNull()
                t.column("url", .text)
                t.column("state", .text).notNull()
                t.column("createdAt", .datetime).notNull()
            }
            try db.create(table: "photoJob") { t in
                t.primaryKey("id", .text)
                t.column("kind", .text).notNull()  // group, profile, album
                t.column("caller", .text).notNull()
                t.column("subject", .text).notNull()  // group id, user id or album photo id
                t.column("key", .text).notNull()
                t.column("preset", .text).notNull()
                t.column("originalPath", .text).notNull()
                t.column("preparedPath", .text)
                t.column("state", .text).notNull().indexed()
                t.column("error", .text)
                t.column("attempts", .integer).notNull()
                t.column("url", .text)
                t.column("claimedBy", .text)
                t.column("claimedAt", .datetime)
                t.column("createdAt", .datetime).notNull()
                t.column("updatedAt", .datetime).notNull()
            }
        }
        migrator.registerMigration("v2: upload resume state") { db in
            // Where each photo's upload stands (the tus upload URL and the bytes the server acknowledged),
            // next to the job; the uploader's journal holds the same for resuming.
            try db.alter(table: "photoJob") { t in
                t.add(column: "uploadLocation", .text)
                t.add(column: "uploadedBytes", .integer).notNull().defaults(to: 0)
            }
        }
        migrator.registerMigration("v3: offline-first client") { db in
            // A client of `photoprep serve` keeps the groups it created while the server was unreachable,
            // and holds their photos back until the server has the group.
            try db.create(table: "pendingGroup") { t in
                t.primaryKey("id", .text)
                t.column("name", .text).notNull()
                t.column("participants", .text).notNull()  // JSON array of user ids
                t.column("photoJob", .text)
                t.column("state", .text).notNull().indexed()  // pending, created, refused
                t.column("error", .text)
                t.column("attempts", .integer).notNull()
                t.column("createdAt", .datetime).notNull()
                t.column("updatedAt", .datetime).notNull()
            }
            try db.alter(table: "photoJob") { t in t.add(column: "waitsFor", .text) }
        }
        migrator.registerMigration("v4: stale objects") { db in
            // Stored objects that should be gone (a replaced profile picture) but could not be deleted yet.
            try db.create(table: "staleObject") { t in
                t.primaryKey("url", .text)
                t.column("caller", .text).notNull()
                t.column("error", .text).notNull()
                t.column("attempts", .integer).notNull()
                t.column("updatedAt", .datetime).notNull()
            }
        }
        return migrator
    }
}
