public import Foundation
import GRDB

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
    public func authorize(caller: String, writing path: StoragePath) throws(ServiceError) {
        try StorageRules.authorize(caller: caller, writing: path) { group in
            try database.read { db in
                try Bool.fetchOne(db, sql: "SELECT isAdmin FROM groupMember WHERE groupId = ? AND userId = ?", arguments: [group, caller]) ?? false
            }
        }
    }

    /// Records the stored photo's effect. The caller is added as a user when the store does not know
    /// them yet (their id comes from a verified token; `displayName` from its `name` claim, if any).
    /// The group photo is re-checked inside the transaction: an admin removed meanwhile changes nothing.
    public func record(caller: String, displayName: String?, path: StoragePath, url: String, at date: Date = Date()) throws(ServiceError) {
        let name = displayName.flatMap { try? NameRules.displayName($0) } ?? caller
        try database.write { db in
            if try !User.exists(db, key: caller) { try User(id: caller, displayName: name).insert(db) }
            switch path {
            case .groupPhoto(let group):
                let admin = try Bool.fetchOne(
                    db, sql: "SELECT isAdmin FROM groupMember WHERE groupId = ? AND userId = ?", arguments: [group, caller]) ?? false
                guard admin else { throw ServiceError.notAllowed("only the admins of group \(group) change its photo") }
                try db.execute(
                    sql: "UPDATE chatGroup SET photoURL = ?, photoState = 'done', photoError = NULL, updatedAt = ? WHERE id = ?",
                    arguments: [url, date, group])
            case .profileImage:
                try db.execute(sql: "UPDATE user SET profilePhotoURL = ?, profilePhotoKey = ? WHERE id = ?", arguments: [url, path.key, caller])
            case .userPhoto(let user, let album, _):
                // The same key again replaces that album photo; a new key is a new photo.
                if let id = try String.fetchOne(db, sql: "SELECT id FROM albumPhoto WHERE key = ?", arguments: [path.key]) {
                    try db.execute(sql: "UPDATE albumPhoto SET url = ?, state = 'done' WHERE id = ?", arguments: [url, id])
                } else {
                    try AlbumPhoto(
                        id: UUID().uuidString.lowercased(), userId: user, album: album, key: path.key, url: url, state: .done, createdAt: date
                    ).insert(db)
                }
            }
        }
    }
}
