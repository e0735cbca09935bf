/// A few open database connections handed out one task at a time (what a transaction needs: its
/// statements on one connection, nobody else's in between). A connection is opened when none is idle
/// and fewer than `limit` are open; past that, callers wait for one to come back. One that broke, or whose
/// user threw `Discard` (a transaction it could not end), is closed instead of reused.
actor ConnectionPool<Connection: Sendable> {
    private let limit: Int
    private let connect: @Sendable () async throws -> Connection
    private let isUsable: @Sendable (Connection) -> Bool
    private let close: @Sendable (Connection) -> Void
    private var idle: [Connection] = []
    private var opened = 0
    /// Waiting callers, oldest first: resumed with a connection, or with nil to open one themselves.
    private var waiters: [CheckedContinuation<Connection?, Never>] = []
    private var closed = false

    init(
        limit: Int, connect: @escaping @Sendable () async throws -> Connection, isUsable: @escaping @Sendable (Connection) -> Bool,
        close: @escaping @Sendable (Connection) -> Void
    ) {
        self.limit = max(1, limit)
        self.connect = connect
        self.isUsable = isUsable
        self.close = close
    }

    /// Runs `body` with a connection of its own.
    func withConnection<T: Sendable>(_ body: @Sendable (Connection) async throws -> T) async throws -> T {
        let connection = try await lease()
        do {
            let result = try await body(connection)
            giveBack(connection)
            return result
        } catch let error as Discard {
            giveBack(connection, reusable: false)
            throw error
        } catch {
            giveBack(connection)
            throw error
        }
    }

    /// Thrown by a user of a connection that must not serve anyone else (its state is unknown): the pool
    /// closes it and rethrows.
    struct Discard: Error {
        var error: any Error
    }

    private func lease() async throws -> Connection {
        guard !closed else { throw PoolClosed() }
        // One that closed while idle (its server or the network ended it) is dropped, never handed out: every
        // statement on it would fail.
        while let connection = idle.popLast() {
            if isUsable(connection) { return connection }
            opened -= 1
            close(connection)
        }
        if opened >= limit {
            if let connection = await withCheckedContinuation({ waiters.append($0) }) { return connection }
            guard !closed else { throw PoolClosed() }
        }
        opened += 1
        do {
            return try await connect()
        } catch {
            opened -= 1
            // Someone waiting may try to open one in turn.
            if !waiters.isEmpty { waiters.removeFirst().resume(returning: nil) }
            throw error
        }
    }

    private func giveBack(_ connection: Connection, reusable: Bool = true) {
        guard reusable, !closed, isUsable(connection) else {
            opened -= 1
            close(connection)
            if !waiters.isEmpty { waiters.removeFirst().resume(returning: nil) }
            return
        }
        if !waiters.isEmpty {
            waiters.removeFirst().resume(returning: connection)
        } else {
            idle.append(connection)
        }
    }

    /// Closes the idle connections; those in use close when they come back.
    func shutdown() {
        closed = true
        for connection in idle { close(connection) }
        idle = []
        for waiter in waiters { waiter.resume(returning: nil) }
        waiters = []
    }

    struct PoolClosed: Error, CustomStringConvertible {
        var description: String { "the database was closed" }
    }
}
