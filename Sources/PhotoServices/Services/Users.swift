import SQLKit

/// User lookups inside other services' transactions.
enum Users {
    static func find(_ id: String, _ db: any SQLDatabase) async throws -> User? {
        try await db.select().columns("*").from("user").where("id", .equal, id).first(decoding: User.self)
    }

    /// Every id in `ids` names a known user; the unknown ones are listed in the error.
    static func require(_ ids: [String], _ db: any SQLDatabase) async throws {
        guard !ids.isEmpty else { return }
        let known = Set(try await db.select().column("id").from("user").where("id", .in, ids).all(decodingColumn: "id", as: String.self))
        let unknown = ids.filter { !known.contains($0) }
        guard unknown.isEmpty else { throw ServiceError.unknownUsers(unknown) }
    }

    static func isAdmin(_ user: String, of group: String, _ db: any SQLDatabase) async throws -> Bool {
        try await db.select().column("isAdmin").from("groupMember").where("groupId", .equal, group).where("userId", .equal, user)
            .first(decodingColumn: "isAdmin", as: Bool.self) ?? false
    }
}
