public import PhotoServices
public import SQLKit

/// What tests read from the services' database (SQLite file or PostgreSQL) besides the services' own
/// calls: rows of a query, counts, records by id.
extension AppDatabase {
    /// The rows of `sql` (binds `?`-free: values go in `binds` as `\(bind:)` would).
    public func rows(_ sql: SQLQueryString) async throws -> [any SQLRow] {
        try await read { db in try await db.raw(sql).all() }
    }

    /// `SELECT count(*) FROM table [WHERE column = value]`.
    public func count(_ table: String, where column: String? = nil, _ value: String? = nil) async throws -> Int {
        try await read { db in
            var query = db.select().column(SQLFunction("count", args: SQLLiteral.all), as: "n").from(table)
            if let column, let value { query = query.where(SQLColumn(column), .equal, SQLBind(value)) }
            return try await query.first(decodingColumn: "n", as: Int.self) ?? 0
        }
    }

    /// The records of `table` (where `column` = `value`), in the order of `orderBy`.
    public func all<T: Decodable & Sendable>(
        _ type: T.Type, from table: String, where column: String? = nil, _ value: String? = nil, orderBy: String = "createdAt"
    ) async throws -> [T] {
        try await read { db in
            var query = db.select().columns("*").from(table)
            if let column, let value { query = query.where(SQLColumn(column), .equal, SQLBind(value)) }
            return try await query.orderBy(orderBy).all(decoding: T.self)
        }
    }

    /// The record of `table` whose `id` (or `key`) is `id`.
    public func one<T: Decodable & Sendable>(_ type: T.Type, from table: String, id: String, key: String = "id") async throws -> T? {
        try await all(type, from: table, where: key, id, orderBy: key).first
    }
}
