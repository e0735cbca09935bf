import Foundation
import SQLKit

/// Stored objects that a newer photo replaced and that could not be deleted yet (storage was down):
/// remembered in the database and deleted later — by `photoprep sync` for the photo jobs, by the upload
/// sweeper for photos that arrived at the server.
public struct StaleObjects: Sendable {
    let database: AppDatabase

    public init(database: AppDatabase) {
        self.database = database
    }

    /// Deletes the replaced object at `url` with `delete`, up to `attempts` times (200 ms, 400 ms … apart);
    /// when every attempt fails it is kept for later (`all()`), with the last reason. `caller` is whose
    /// credentials delete it.
    public func delete(_ url: String, caller: String, attempts: Int = 3, with delete: (String) async throws -> Void) async {
        var failure = ""
        for attempt in 1...max(1, attempts) {
            do {
                try await delete(url)
                try? await forget(url)
                return
            } catch {
                failure = "\(error)"
                if attempt < attempts { try? await Task.sleep(for: .milliseconds(200 * attempt)) }
            }
        }
        try? await keep(url, caller: caller, error: failure, attempts: attempts)
    }

    /// Tries once more to delete every object still to delete; `delete` gets its URL and whose credentials delete it.
    public func retryAll(with delete: (_ url: String, _ caller: String) async throws -> Void) async {
        for object in (try? await all()) ?? [] {
            await self.delete(object.url, caller: object.caller, attempts: 1) { try await delete($0, object.caller) }
        }
    }

    /// The objects still to delete, oldest first.
    public func all() async throws(ServiceError) -> [StaleObject] {
        try await database.read { db in try await db.select().columns("*").from("staleObject").orderBy("updatedAt").all(decoding: StaleObject.self) }
    }

    func keep(_ url: String, caller: String, error: String, attempts: Int) async throws(ServiceError) {
        try await database.write { db in
            let tried = try await db.select().column("attempts").from("staleObject").where("url", .equal, url)
                .first(decodingColumn: "attempts", as: Int.self) ?? 0
            try await db.delete(from: "staleObject").where("url", .equal, url).run()
            try await db.insert(into: "staleObject")
                .model(StaleObject(url: url, caller: caller, error: error, attempts: tried + attempts, updatedAt: Date())).run()
        }
    }

    func forget(_ url: String) async throws(ServiceError) {
        try await database.write { db in try await db.delete(from: "staleObject").where("url", .equal, url).run() }
    }
}
