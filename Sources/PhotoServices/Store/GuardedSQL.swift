import Logging
import NIOCore
import SQLKit

/// A PostgreSQL connection's statements, none of them left waiting on a connection that closed.
///
/// PostgresNIO writes a statement to its channel without a promise for the write: one written after the channel
/// closed (its server or the network ended it, or the statement deadline closed it, `AppDatabase.bounded`) is lost
/// without failing, and whoever waits for it — a transaction's ROLLBACK after its statement failed, or a caller that
/// got the connection just before it closed — waits forever. Here every statement is answered by a promise of our
/// own, failed when the connection closes (`closeAll`, called from its close future) if PostgresNIO has not answered
/// it by then; a statement sent after that fails at once.
struct GuardedSQL: SQLDatabase {
    let base: any SQLDatabase
    let statements: PendingStatements

    var logger: Logger { base.logger }
    var eventLoop: any EventLoop { base.eventLoop }
    var version: (any SQLDatabaseReportedVersion)? { base.version }
    var dialect: any SQLDialect { base.dialect }
    var queryLogLevel: Logger.Level? { base.queryLogLevel }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) -> EventLoopFuture<Void> {
        let promise = eventLoop.makePromise(of: Void.self)
        guard let id = statements.add(promise) else {
            promise.fail(ConnectionClosed())
            return promise.futureResult
        }
        base.execute(sql: query, onRow).whenComplete { [statements] result in
            if statements.remove(id) { promise.completeWith(result) }
        }
        return promise.futureResult
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        try await execute(sql: query, onRow).get()
    }

    struct ConnectionClosed: Error, CustomStringConvertible {
        var description: String { "the database connection was closed" }
    }
}
