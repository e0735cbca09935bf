import Foundation
import SQLKit

/// Users: the identities every call names.
public struct UserDirectory: Sendable {
    let database: AppDatabase

    /// Adds (or renames) a user.
    @discardableResult
    public func add(id: String, displayName: String, email: String? = nil) async throws(ServiceError) -> User {
        let id = try StorageRules.validated(id, "user id")
        let displayName = try NameRules.displayName(displayName)
        return try await database.write { db in
            if var user = try await Users.find(id, db) {
                user.displayName = displayName
                user.email = email ?? user.email
                try await db.update("user").set("displayName", to: user.displayName).set("email", to: user.email).where("id", .equal, id).run()
                return user
            }
            let user = User(id: id, displayName: displayName, email: email)
            try await db.insert(into: "user").model(user).run()
            return user
        }
    }

    public func user(_ id: String) async throws(ServiceError) -> User? {
        try await database.read { db in try await Users.find(id, db) }
    }

    /// Changes a known user's display name (the same rules as `add`).
    @discardableResult
    public func rename(_ id: String, to displayName: String) async throws(ServiceError) -> User {
        let displayName = try NameRules.displayName(displayName)
        return try await database.write { db in
            guard var user = try await Users.find(id, db) else { throw ServiceError.notFound("user \(id)") }
            user.displayName = displayName
            try await db.update("user").set("displayName", to: displayName).where("id", .equal, id).run()
            try await Outbox.record(.userRenamed, subject: "user:\(id)", data: ["userId": id, "displayName": displayName], db)
            return user
        }
    }

    /// Users whose display name starts with `prefix` (ignoring ASCII case), never `excluding` (the caller),
    /// by name (ignoring ASCII case) then id, at most `limit`, after the user `after` (the last one of the previous page).
    public func search(prefix: String, excluding: String, limit: Int = 50, after: User? = nil) async throws(ServiceError) -> [User] {
        let limit = max(1, min(limit, 200))
        let pattern = prefix.lowercasedASCII.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
            .replacingOccurrences(of: "_", with: "\\_") + "%"
        // lower() on both databases folds ASCII only here (SQLite's always; PostgreSQL's in the C locale the
        // cluster is made with), and LIKE on the folded name is the same on both.
        let name = SQLFunction("lower", args: SQLColumn("displayName"))
        let matches: SQLQueryString = "\(bind: pattern) ESCAPE '\\'"
        return try await database.read { db in
            var query = db.select().columns("*").from("user")
                .where(SQLBinaryExpression(name, .like, matches))
                .where("id", .notEqual, excluding)
            if let after {
                let afterName = after.displayName.lowercasedASCII
                query = query.where { page in
                    page.where(name, .greaterThan, SQLBind(afterName))
                        .orWhere { $0.where(name, .equal, SQLBind(afterName)).where("id", .greaterThan, after.id) }
                }
            }
            return try await query.orderBy(name).orderBy("id").limit(limit).all(decoding: User.self)
        }
    }
}

extension String {
    /// A-Z to a-z, nothing else: what both databases' `lower()` does here.
    var lowercasedASCII: String {
        String(unicodeScalars.map { (65...90).contains($0.value) ? Character(Unicode.Scalar($0.value + 32)!) : Character($0) })
    }
}
