import Crypto
public import Foundation
import SQLKit

/// The stored photos as readers get them: each one's version and download token, who may read it, and
/// regenerating a token (the old download URL stops working). Recorded by `PhotoIntake` when a photo is
/// stored, forgotten when it is replaced or deleted.
public struct StoredPhotos: Sendable {
    let database: AppDatabase

    public init(database: AppDatabase) {
        self.database = database
    }

    /// The photo stored at `key`, if any.
    public func photo(_ key: String) async throws(ServiceError) -> StoredPhoto? {
        try await database.read { db in try await Self.photo(key, db) }
    }

    /// The photos stored at `keys` (those that are), by key.
    public func photos(_ keys: [String]) async throws(ServiceError) -> [String: StoredPhoto] {
        guard !keys.isEmpty else { return [:] }
        let found = try await database.read { db in
            try await db.select().columns("*").from("storedPhoto").where("key", .in, keys).all(decoding: StoredPhoto.self)
        }
        return Dictionary(found.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// May signed-in `caller` read the photo at `path`? The storage rules' read rule, with group members
    /// read from the database.
    public func mayRead(caller: String, _ path: StoragePath) async throws(ServiceError) -> Bool {
        var member = false
        if case .groupPhoto(let group) = path {
            member = try await database.read { db in
                try await db.select().column("userId").from("groupMember").where("groupId", .equal, group).where("userId", .equal, caller)
                    .first() != nil
            }
        }
        return try StorageRules.mayRead(caller: caller, path) { _ in member }
    }

    /// Gives the photo at `path` a new download token, so that its download URL so far stops working: its
    /// owner's own photos, a group's photo by the group's admins (`notAllowed` otherwise; `notFound` when
    /// nothing is stored there).
    public func regenerateToken(caller: String, _ path: StoragePath) async throws(ServiceError) -> StoredPhoto {
        try await database.write { db in
            var admin = false
            if case .groupPhoto(let group) = path { admin = try await Users.isAdmin(caller, of: group, db) }
            try StorageRules.authorize(caller: caller, writing: path) { _ in admin }
            guard var photo = try await Self.photo(path.key, db) else { throw ServiceError.notFound("no photo at \(path.key)") }
            photo.token = Self.newToken()
            try await db.update("storedPhoto").set("token", to: photo.token).where("key", .equal, path.key).run()
            return photo
        }
    }

    static func photo(_ key: String, _ db: any SQLDatabase) async throws -> StoredPhoto? {
        try await db.select().columns("*").from("storedPhoto").where("key", .equal, key).first(decoding: StoredPhoto.self)
    }

    /// Records the photo now stored at `key` with a new token (replacing what was there).
    static func record(key: String, location: String, bytes: Content, at date: Date, _ db: any SQLDatabase) async throws {
        try await db.delete(from: "storedPhoto").where("key", .equal, key).run()
        try await db.insert(into: "storedPhoto")
            .model(StoredPhoto(key: key, location: location, sha256: bytes.sha256, size: bytes.size, token: newToken(), storedAt: date)).run()
    }

    static func forget(key: String, _ db: any SQLDatabase) async throws {
        try await db.delete(from: "storedPhoto").where("key", .equal, key).run()
    }

    /// 128 random bits from the system's generator, in hex: unguessable.
    static func newToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in String(generator.next() as UInt64, radix: 16).leftPadded(to: 16) }.joined()
    }

    /// What readers are told of a photo's bytes: their SHA-256 (the strong `ETag`) and their count.
    public struct Content: Sendable {
        public var sha256: String
        public var size: Int64

        public init(of bytes: [UInt8]) {
            sha256 = SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
            size = Int64(bytes.count)
        }
    }
}

extension String {
    fileprivate func leftPadded(to length: Int) -> String {
        count >= length ? self : String(repeating: "0", count: length - count) + self
    }
}
