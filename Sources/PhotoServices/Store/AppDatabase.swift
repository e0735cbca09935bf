import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresKit
public import SQLKit
import SQLiteKit
import Synchronization

/// A database of the services, the server or a client (`Role`: each gets its own tables): users, groups
/// and their members, messages, notifications, album photos, the photo jobs, a client's pending groups,
/// and what the caller adds (the server's shared uploads). One schema and one set of migrations (`Schema`) on either store:
///
/// - **SQLite**, the embedded default: one file, for one machine (several processes may share it).
/// - **PostgreSQL**, to scale out: several `photoprep serve` instances share one database.
///
/// Every query goes through SQLKit's builders, which speak both dialects.
///
/// ```swift
/// let database = try await AppDatabase.open("postgres://photoprep@db.internal/photoprep")  // or a file path
/// let user = try await database.read { db in try await db.select().columns("*").from("user").first(decoding: User.self) }
/// ```
public final class AppDatabase: Sendable {
    public enum Kind: String, Sendable {
        case sqlite, postgres
    }

    public let kind: Kind
    /// Where it is, for messages: the file, or the PostgreSQL URL without its password.
    public let location: String
    /// On PostgreSQL, how long one statement or transaction may wait on its connection before the connection is
    /// closed (`bounded`); nil: as long as it takes.
    let deadline: Duration?
    private let pool: ConnectionPool<Connection>
    private let writes = Atomic<Int>(0)

    /// How many write transactions of this process have ended (committed or not): a read that began when
    /// this was `n` saw every write of this process that ended before, so what it read may be reused for as
    /// long as this is still `n` (`StoredPhotos.Recent`).
    public var writesEnded: Int { writes.load(ordering: .acquiring) }

    /// Opens (and migrates) the database at `location`: a `postgres://` (or `postgresql://`) URL, or a path
    /// to an SQLite file.
    /// `deadline`: on PostgreSQL, how long one statement or transaction may wait before its connection is closed
    /// (a server's requests must end; a command may wait). `more`: the caller's own tables' migrations, run after the
    /// role's (every initialiser takes them).
    public static func open(
        _ location: String, role: Role = .services, deadline: Duration? = nil, also more: [SchemaMigration] = []
    ) async throws(ServiceError) -> AppDatabase {
        if location.hasPrefix("postgres://") || location.hasPrefix("postgresql://") {
            return try await AppDatabase(postgres: location, role: role, deadline: deadline, also: more)
        }
        return try await AppDatabase(path: location, role: role, also: more)
    }

    /// An SQLite file (WAL mode, so readers never block the writer; several processes may share it).
    /// A new file is created owner-only (0600, in a new folder 0700; SQLite gives its WAL and shared-memory
    /// files the database's mode): it holds users, groups and messages.
    public convenience init(path: String, role: Role = .services, also more: [SchemaMigration] = []) async throws(ServiceError) {
        do {
            try FileManager.default.createDirectory(
                at: URL(fileURLWithPath: path).deletingLastPathComponent(), withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
        } catch {
            throw .storage("\(path): \(error.localizedDescription)")
        }
        let fd = Glibc.open(path, O_WRONLY | O_CREAT, 0o600)
        if fd >= 0 { Glibc.close(fd) }
        try await self.init(kind: .sqlite, migrations: role.migrations + more, location: path, limit: 1) {
            let connection = try await SQLiteConnection.open(storage: .file(path: path))
            do {
                let sql = connection.sql(queryLogLevel: nil)
                // Waits up to 10 s for another process's write instead of failing at once (or spinning).
                try await sql.raw("PRAGMA busy_timeout = 10000").run()
                try await sql.raw("PRAGMA journal_mode = WAL").run()
                try await sql.raw("PRAGMA foreign_keys = ON").run()
                return Connection(sql: sql, isOpen: { true }, close: { _ = connection.close().always { _ in _ = connection } })
            } catch {
                try? await connection.close()
                throw error
            }
        }
    }

    /// An in-memory SQLite database, for fast tests and throwaway demos (gone with this object).
    /// Its one connection is the database: should it be discarded, the database is gone and every later
    /// transaction fails saying so (a new connection would silently be a new, empty database).
    public static func inMemory(role: Role = .services, also more: [SchemaMigration] = []) async throws(ServiceError) -> AppDatabase {
        let opened = Mutex(false)
        return try await AppDatabase(kind: .sqlite, migrations: role.migrations + more, location: ":memory:", limit: 1) {
            guard !opened.withLock({ wasOpened in
                defer { wasOpened = true }
                return wasOpened
            }) else {
                throw ServiceError.storage("the in-memory database was lost with its connection")
            }
            let connection = try await SQLiteConnection.open(storage: .memory)
            try await connection.sql(queryLogLevel: nil).raw("PRAGMA foreign_keys = ON").run()
            return Connection(sql: connection.sql(queryLogLevel: nil), isOpen: { true }, close: { _ = connection.close().always { _ in _ = connection } })
        }
    }

    /// A PostgreSQL database, e.g. `postgres://user:password@host:5432/name` (`?sslmode=disable` or
    /// `require`; a `unix-socket` query names a socket path instead of host and port). The schema is
    /// migrated under an advisory lock, so instances started together migrate once.
    public convenience init(
        postgres url: String, role: Role = .services, connections: Int = 8, deadline: Duration? = nil, also more: [SchemaMigration] = []
    ) async throws(ServiceError) {
        let configuration: SQLPostgresConfiguration
        do {
            configuration = try SQLPostgresConfiguration(url: url)
        } catch {
            throw .storage("\(Self.redacted(url)): not a PostgreSQL URL (\(error))")
        }
        let logger = Logger(label: "photoprep.database")
        let ids = Counter()
        try await self.init(kind: .postgres, migrations: role.migrations + more, location: Self.redacted(url), limit: connections, deadline: deadline) {
            let connection = try await PostgresConnection.connect(
                on: MultiThreadedEventLoopGroup.singleton.any(), configuration: configuration.coreConfiguration, id: ids.next(), logger: logger)
            let statements = PendingStatements()
            connection.closeFuture.whenComplete { _ in statements.closeAll() }
            return Connection(
                sql: GuardedSQL(base: connection.sql(queryLogLevel: nil), statements: statements), isOpen: { !connection.isClosed },
                close: { _ = connection.close().always { _ in _ = connection } })
        }
    }

    private init(
        kind: Kind, migrations: [SchemaMigration], location: String, limit: Int, deadline: Duration? = nil,
        connect: @escaping @Sendable () async throws -> Connection
    ) async throws(ServiceError) {
        self.kind = kind
        self.location = location
        self.deadline = deadline
        pool = ConnectionPool(limit: limit, connect: connect, isUsable: { $0.isUsable }, close: { $0.close() })
        do {
            // Not bounded by `deadline`: it may wait for another instance's migration (an advisory lock).
            try await transaction(begin: kind == .sqlite ? "BEGIN IMMEDIATE" : "BEGIN", bounded: false) { db in
                try await Schema.migrate(db, kind: kind, migrations)
            }
        } catch {
            await pool.shutdown()
            throw .storage("\(location): migrating the schema: \(error)")
        }
    }

    deinit {
        let pool = self.pool
        // Closing only hands the connections back to their event loops; nothing is waited for or lost.
        Task { await pool.shutdown() }
    }

    /// Closes the connections (those in use close when their transaction ends).
    public func close() async {
        await pool.shutdown()
    }

    /// Runs `body` in a read transaction: what it reads is one consistent state.
    public func read<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws(ServiceError) -> T {
        try await transaction(begin: kind == .sqlite ? "BEGIN" : "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", body)
    }

    /// Runs one statement outside a transaction (autocommit): for a read that is a single `SELECT`, which
    /// sees one consistent state by itself — half the round trips of `read` (no `BEGIN`, no `COMMIT`).
    public func query<T: Sendable>(_ statement: @Sendable (any SQLDatabase) async throws -> T) async throws(ServiceError) -> T {
        do {
            return try await pool.withConnection { connection in try await bounded(connection) { try await statement(connection.sql) } }
        } catch let error as ServiceError {
            throw error
        } catch {
            throw .storage("\(location): \(Self.describe(error))")
        }
    }

    /// Runs `body` in a write transaction: all or nothing (nothing when its task is cancelled before it commits). On SQLite the write lock is taken at the start
    /// (`BEGIN IMMEDIATE`), so two processes never both read, then fail to write.
    public func write<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws(ServiceError) -> T {
        defer { writes.add(1, ordering: .releasing) }
        return try await transaction(begin: kind == .sqlite ? "BEGIN IMMEDIATE" : "BEGIN", body)
    }

    private func transaction<T: Sendable>(
        begin: String, bounded isBounded: Bool = true, _ body: @Sendable (any SQLDatabase) async throws -> T
    ) async throws(ServiceError) -> T {
        do {
            return try await pool.withConnection { connection in try await bounded(connection, isBounded) {
                let db = connection.sql
                try await db.raw(SQLQueryString(begin)).run()
                let result: T
                do {
                    result = try await body(db)
                    // Cancelled before it could commit: rolled back on every database alike (SQLite's statements
                    // already refuse to run for a cancelled task; PostgreSQL's would run to the end).
                    try Task.checkCancellation()
                } catch {
                    try await Self.end("ROLLBACK", db, after: error)
                    throw error
                }
                do {
                    try await Self.end("COMMIT", db)
                } catch let error as ConnectionPool<Connection>.Discard {
                    throw error
                } catch {
                    try await Self.end("ROLLBACK", db, after: error)
                    throw error
                }
                return result
            } }
        } catch let error as ServiceError {
            throw error
        } catch let discarded as ConnectionPool<Connection>.Discard {
            throw .storage("\(location): \(Self.describe(discarded.error))")
        } catch {
            throw .storage("\(location): \(Self.describe(error))")
        }
    }

    /// Runs `work` on `connection`; with a `deadline` (PostgreSQL) the connection is closed when `work` has not
    /// ended within it, or when its task is cancelled (a PostgreSQL statement does not stop for a cancelled task),
    /// which fails what waits on it: a database that stopped answering (its host gone, its network cut) neither
    /// answers nor resets, and without this a request would wait for TCP to give up, many minutes. SQLite waits its
    /// busy timeout instead.
    ///
    /// A connection the watch closed is retired first: the pool never gives it out again, even when the work's
    /// failure arrives before the close has taken effect (whatever is sent on it fails, `GuardedSQL`).
    private func bounded<T>(_ connection: Connection, _ applies: Bool = true, _ work: () async throws -> T) async throws -> T {
        guard applies, kind == .postgres, let deadline else { return try await work() }
        let ended = Flag()
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try? await Task.sleep(for: deadline)
                if !ended.value.load(ordering: .acquiring) {
                    connection.retired.value.store(true, ordering: .releasing)
                    connection.close()
                }
            }
            defer {
                ended.value.store(true, ordering: .releasing)
                group.cancelAll()
            }
            return try await work()
        }
    }

    /// Ends the transaction with `statement` (COMMIT or ROLLBACK) whatever happened to the task that began it.
    ///
    /// Sent through SQLKit's future API: the async one refuses to start a statement for a cancelled task
    /// (SQLite's statements run on NIO's thread pool, which drops a cancelled task's work unrun), so a
    /// transaction cancelled half-way was never rolled back and its connection went back to the pool inside
    /// it. A ROLLBACK that fails all the same leaves the connection in an unknown state: it is discarded
    /// (`ConnectionPool.Discard`), never handed to another caller.
    private static func end(_ statement: String, _ db: any SQLDatabase, after failure: (any Error)? = nil) async throws {
        do {
            try await db.raw(SQLQueryString(statement)).run().get()
        } catch {
            // A COMMIT refused is followed by a ROLLBACK; only a failed ROLLBACK loses the connection.
            guard statement == "ROLLBACK" else { throw error }
            throw ConnectionPool<Connection>.Discard(error: failure ?? error)
        }
    }

    /// The database's own words (PostgreSQL's server message, SQLite's message), not a type dump.
    static func describe(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            return error.serverInfo?[.message] ?? "\(error.code)"
        }
        return String(describing: error)
    }

    /// The URL without its password.
    static func redacted(_ url: String) -> String {
        guard var components = URLComponents(string: url), components.password != nil else { return url }
        components.password = "…"
        return components.string ?? url
    }

    private final class Counter: Sendable {
        private let value = Mutex(0)
        func next() -> Int { value.withLock { $0 += 1; return $0 } }
    }
}

