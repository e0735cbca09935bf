public import Foundation
import SQLKit

/// Photos that arrived at the server: who may write where (read from the services' store), and what a
/// stored photo changes — the group's photo, the user's profile picture, an album photo — recorded in
/// one transaction. `photoprep serve` calls it after it stored a normalised photo.
public struct PhotoArrivals: Sendable {
    let database: AppDatabase

    public init(database: AppDatabase) {
        self.database = database
    }

    /// May `caller` write `path`? The same `StorageRules.authorize` the services apply before uploading,
    /// with group admins read from the database.
    public func authorize(caller: String, writing path: StoragePath) async throws(ServiceError) {
        var admin = false
        if case .groupPhoto(let group) = path {
            admin = try await database.read { db in try await Users.isAdmin(caller, of: group, db) }
        }
        try StorageRules.authorize(caller: caller, writing: path) { _ in admin }
    }

    /// Records the stored photo's effect; returns the object it replaces (a previous profile picture under
    /// another name), for the caller to delete once the new one is recorded. The caller is added as a user
    /// when the store does not know them yet (their id comes from a verified token; `displayName` from its
    /// `name` claim, if any). The group photo is re-checked inside the transaction: an admin removed
    /// meanwhile changes nothing.
    @discardableResult
    public func record(caller: String, displayName: String?, path: StoragePath, url: String, at date: Date = Date()) async throws(ServiceError) -> String? {
        let name = displayName.flatMap { try? NameRules.displayName($0) } ?? caller
        return try await database.write { db -> String? in
            if try await Users.find(caller, db) == nil { try await db.insert(into: "user").model(User(id: caller, displayName: name)).run() }
            switch path {
            case .groupPhoto(let group):
                guard try await Users.isAdmin(caller, of: group, db) else {
                    throw ServiceError.notAllowed("only the admins of group \(group) change its photo")
                }
                try await db.update("chatGroup").set("photoURL", to: url).set("photoState", to: PhotoState.done.rawValue)
                    .set("photoError", to: SQLLiteral.null).set("updatedAt", to: date).where("id", .equal, group).run()
            case .profileImage:
                return try await Users.setProfilePhoto(caller, url: url, key: path.key, db)
            case .userPhoto(let user, let album, _):
                // The same key again replaces that album photo; a new key is a new photo.
                if let id = try await db.select().column("id").from("albumPhoto").where("key", .equal, path.key).first(decodingColumn: "id", as: String.self) {
                    try await db.update("albumPhoto").set("url", to: url).set("state", to: PhotoState.done.rawValue).where("id", .equal, id).run()
                } else {
                    let photo = AlbumPhoto(
                        id: UUID().uuidString.lowercased(), userId: user, album: album, key: path.key, url: url, state: .done, createdAt: date)
                    try await db.insert(into: "albumPhoto").model(photo).run()
                }
            }
            return nil
        }
    }
}
