public import SQLKit

/// One step of a database's schema (`Schema`), run once on SQLite and PostgreSQL alike, in the transaction that
/// records its name in `schemaMigration`. A module that keeps tables of its own in the services' database (the
/// server's uploads in progress) gives its steps to `AppDatabase` (`also:`); each is added at the end of its
/// module's list and never changed once shipped.
public struct SchemaMigration: Sendable {
    public let name: String
    /// The name it shipped under when every database got every table (v1–v5): a database migrated then has it
    /// already. Empty for those added since.
    public let shippedAs: String
    public let run: @Sendable (any SQLDatabase) async throws -> Void

    public init(name: String, shippedAs: String = "", run: @escaping @Sendable (any SQLDatabase) async throws -> Void) {
        self.name = name
        self.shippedAs = shippedAs
        self.run = run
    }
}
