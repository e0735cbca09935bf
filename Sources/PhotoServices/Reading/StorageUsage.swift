import Foundation
import SQLKit

/// What a user keeps stored in their own folders (`StorageAmount`), read from the stored photos' records by their
/// owner (indexed): a photo deleted or replaced stops counting when its record goes, in the same transaction.
extension StorageUsage {
    /// `user`'s usage, leaving out the photos at `excluded` (those a photo being stored replaces).
    static func of(_ user: String, excluding excluded: [String] = [], _ db: any SQLDatabase) async throws -> StorageUsage {
        var mine = SQLQueryString(#"p."owner" = "#)
        mine.appendInterpolation(bind: user)
        for key in excluded {
            mine.appendLiteral(#" AND p."key" <> "#)
            mine.appendInterpolation(bind: key)
        }
        let photos = try await db.raw(
            #"SELECT COUNT(*) AS "n", CAST(COALESCE(SUM(p."size"), 0) AS BIGINT) AS "b" FROM "storedPhoto" p WHERE \#(mine)"#
        ).first()
        let thumbnails = try await db.raw(
            #"""
            SELECT CAST(COALESCE(SUM(t."size"), 0) + COALESCE(SUM(t."webpSize"), 0) AS BIGINT) AS "b"
            FROM "storedThumbnail" t JOIN "storedPhoto" p ON p."key" = t."key" WHERE \#(mine)
            """#
        ).first()
        return StorageUsage(
            bytes: (try photos?.decode(column: "b", as: Int64.self) ?? 0) + (try thumbnails?.decode(column: "b", as: Int64.self) ?? 0),
            photos: try photos?.decode(column: "n", as: Int64.self) ?? 0)
    }

    /// `user`'s own quota, if one was set (`photoprep user quota`).
    static func ownQuota(of user: String, _ db: any SQLDatabase) async throws -> StorageQuota? {
        guard let row = try await db.select().columns("bytes", "photos").from("userQuota").where("userId", .equal, user).first() else { return nil }
        return StorageQuota(bytes: try row.decode(column: "bytes", as: Int64.self), photos: try row.decode(column: "photos", as: Int64.self))
    }
}
