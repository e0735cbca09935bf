import SQLKit
import Synchronization

extension AppDatabase {
    /// One open connection, to either store; a retired one is closed and never used again.
    struct Connection: Sendable {
        let sql: any SQLDatabase
        let isOpen: @Sendable () -> Bool
        let close: @Sendable () -> Void
        let retired = Flag()

        var isUsable: Bool { !retired.value.load(ordering: .acquiring) && isOpen() }
    }

    /// A flag set once, read from any task.
    final class Flag: Sendable {
        let value = Atomic(false)
    }
}
