import Crypto
import Foundation
import PhotoFiles
public import PhotoPrep
import SQLKit
import Synchronization

/// The stored photos as readers get them: each one's version and download token, who may read it, and
/// regenerating a token (the old download URL stops working). Recorded by `PhotoIntake` when a photo is
/// stored, forgotten when it is replaced or deleted.
public struct StoredPhotos: Sendable {
    let database: AppDatabase
    let recent: Recent
    /// The time `Recent`'s lifetimes are measured in (a test's own clock; the continuous clock's otherwise).
    let now: @Sendable () -> ContinuousClock.Instant

    /// `lifetime`: how long a record read is reused from memory (`Recent`) — how long a change made by another
    /// instance may take to be seen here.
    public init(database: AppDatabase, lifetime: Duration = Recent.lifetime, now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }) {
        self.database = database
        self.recent = Recent(lifetime: lifetime)
        self.now = now
    }

    public typealias Media = (photo: StoredPhoto, object: StoredThumbnail?)

    /// What a reader of `key` is served: the photo (for its token and version) and, with `edge`, that
    /// thumbnail's object instead of the photo's (nil when the photo has no such thumbnail). Read in one
    /// statement, and reused from memory (`Recent`) while no write of this process has ended since and for
    /// at most its lifetime (`init`) — how long a change made by another instance (a regenerated token, a
    /// replaced photo) may take to be seen here. A key with no photo is remembered alike, so that asking for
    /// one takes the same way and time as asking for a photo with a wrong token: the answer's speed does not
    /// say whether a photo exists.
    public func media(_ key: String, edge: Int?) async throws(ServiceError) -> Media? {
        let writes = database.writesEnded
        let now = now()
        if let known = recent.lookup(key, edge: edge, writes: writes, now: now) { return known }
        let media = try await read(key, edge: edge)
        recent.keep(media, key: key, edge: edge, writes: writes, now: now)
        return media
    }

    /// What `media` answers from memory, without waiting: nil when it would read the database.
    public func remembered(_ key: String, edge: Int?) -> Media? {
        recent.lookup(key, edge: edge, writes: database.writesEnded, now: now()) ?? nil
    }

    private func read(_ key: String, edge: Int?) async throws(ServiceError) -> Media? {
        try await database.query { db in
            let rows = try await db.raw(
                """
                SELECT p."key", p."location", p."sha256", p."size", p."token", p."storedAt", p."score",
                  t."edge" AS "tEdge", t."width" AS "tWidth", t."height" AS "tHeight", t."location" AS "tLocation",
                  t."sha256" AS "tSha256", t."size" AS "tSize", t."webpLocation" AS "tWebpLocation", t."webpSha256" AS "tWebpSha256",
                  t."webpSize" AS "tWebpSize"
                FROM "storedPhoto" p LEFT JOIN "storedThumbnail" t ON t."key" = p."key" AND t."edge" = \(bind: edge ?? -1)
                WHERE p."key" = \(bind: key)
                """
            ).all()
            guard let row = rows.first else { return nil }
            let photo = try row.decode(model: StoredPhoto.self)
            guard edge != nil, let thumbnailEdge = try row.decode(column: "tEdge", as: Int?.self) else { return (photo, nil) }
            let thumbnail = StoredThumbnail(
                key: key, edge: thumbnailEdge, width: try row.decode(column: "tWidth", as: Int.self), height: try row.decode(column: "tHeight", as: Int.self),
                location: try row.decode(column: "tLocation", as: String.self), sha256: try row.decode(column: "tSha256", as: String.self),
                size: try row.decode(column: "tSize", as: Int64.self), webpLocation: try row.decode(column: "tWebpLocation", as: String?.self),
                webpSha256: try row.decode(column: "tWebpSha256", as: String?.self), webpSize: try row.decode(column: "tWebpSize", as: Int64?.self))
            return (photo, thumbnail)
        }
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
    /// owner's own photos, a group's photo by the group's admins (`notAllowed` otherwise; `invalidState` when
    /// nothing is stored there yet).
    public func regenerateToken(caller: String, _ path: StoragePath) async throws(ServiceError) -> StoredPhoto {
        try await database.write { db in
            var admin = false
            if case .groupPhoto(let group) = path { admin = try await Users.isAdmin(caller, of: group, db) }
            try StorageRules.authorize(caller: caller, writing: path) { _ in admin }
            guard var photo = try await Self.photo(path.key, db) else { throw ServiceError.invalidState("there is no photo at \(path.key) yet") }
            photo.token = Self.newToken()
            try await db.update("storedPhoto").set("token", to: photo.token).where("key", .equal, path.key).run()
            return photo
        }
    }

    static func photo(_ key: String, _ db: any SQLDatabase) async throws -> StoredPhoto? {
        try await db.select().columns("*").from("storedPhoto").where("key", .equal, key).first(decoding: StoredPhoto.self)
    }

    /// The thumbnails of the photos at `keys`, by key, smallest first.
    public func thumbnails(_ keys: [String]) async throws(ServiceError) -> [String: [StoredThumbnail]] {
        guard !keys.isEmpty else { return [:] }
        let found = try await database.read { db in
            try await db.select().columns("*").from("storedThumbnail").where("key", .in, keys).orderBy("edge").all(decoding: StoredThumbnail.self)
        }
        return Dictionary(grouping: found, by: \.key)
    }

    /// Records the photo now stored at `key`, and its thumbnails, with a new token (replacing what was
    /// there); returns the locations of thumbnails it had that the new ones do not overwrite, and whether a photo was
    /// recorded at `key` before.
    static func record(key: String, stored: StoredObjects, by caller: String, at date: Date, _ db: any SQLDatabase) async throws -> (
        replaced: [String], existed: Bool
    ) {
        let old = try await forget(key: key, db)
        let photo = stored.photo
        try await db.insert(into: "storedPhoto")
            .model(StoredPhoto(
                key: key, location: photo.location, sha256: photo.content.sha256, size: photo.content.size, token: newToken(), storedAt: date,
                score: stored.score, placeholder: stored.placeholder, takenAt: stored.takenAt,
                takenAtUTC: stored.takenAt.flatMap { ISO8601DateFormatter().date(from: $0) }, focus: stored.focus?.description,
                owner: (try? StoragePath(key: key))?.owner, uploadedBy: caller, quarantine: stored.quarantine))
            .run()
        return (try await insert(stored.thumbnails, key: key, replacing: old.thumbnails, db), old.photo != nil)
    }

    /// A stored photo's thumbnails, as the intake put them.
    public typealias StoredThumbnails = [(edge: Int, width: Int, height: Int, object: StoredObject, webp: StoredObject?)]

    /// Records `thumbnails` for the photo at `key`; returns those of `old` (locations) they do not overwrite.
    private static func insert(_ thumbnails: StoredThumbnails, key: String, replacing old: [String], _ db: any SQLDatabase) async throws -> [String] {
        for thumbnail in thumbnails {
            try await db.insert(into: "storedThumbnail")
                .model(StoredThumbnail(
                    key: key, edge: thumbnail.edge, width: thumbnail.width, height: thumbnail.height, location: thumbnail.object.location,
                    sha256: thumbnail.object.content.sha256, size: thumbnail.object.content.size, webpLocation: thumbnail.webp?.location,
                    webpSha256: thumbnail.webp?.content.sha256, webpSize: thumbnail.webp?.content.size))
                .run()
        }
        let kept = Set(thumbnails.flatMap { [$0.object.location] + ($0.webp.map { [$0.location] } ?? []) })
        return old.filter { !kept.contains($0) }
    }

    /// Records `thumbnails` as those of the photo at `key` (made again: `PhotoIntake.refocus`); returns the locations of
    /// those it had that the new ones do not overwrite (a WebP no longer made).
    static func replaceThumbnails(key: String, with thumbnails: StoredThumbnails, _ db: any SQLDatabase) async throws -> [String] {
        let rows = try await db.delete(from: "storedThumbnail").where("key", .equal, key).returning("location", "webpLocation").all()
        let old = try rows.flatMap { row in
            [try row.decode(column: "location", as: String.self)] + (try row.decode(column: "webpLocation", as: String?.self).map { [$0] } ?? [])
        }
        return try await insert(thumbnails, key: key, replacing: old, db)
    }

    /// Forgets the photo at `key` and its thumbnails; returns their locations (to delete: `all`). Two statements
    /// (`DELETE … RETURNING`, in SQLite and PostgreSQL alike): each is a trip to the database's thread and back.
    @discardableResult
    static func forget(key: String, _ db: any SQLDatabase) async throws -> (photo: String?, thumbnails: [String], all: [String]) {
        let thumbnails = try await replaceThumbnails(key: key, with: [], db)
        let photo = try await db.delete(from: "storedPhoto").where("key", .equal, key).returning("location").first(decodingColumn: "location", as: String.self)
        return (photo, thumbnails, (photo.map { [$0] } ?? []) + thumbnails)
    }

    /// Where the photo at `key` is stored (the one place that says it), or nil when nothing is stored there.
    public func location(of key: String) async throws(ServiceError) -> String? {
        try await database.query { db in
            try await db.select().column("location").from("storedPhoto").where("key", .equal, key).first(decodingColumn: "location", as: String.self)
        }
    }

    /// Recently read records of stored photos (`media`), and keys found to have none, each valid while the
    /// database's count of ended writes is the one it was read under, and for `lifetime`. At most `capacity`
    /// of each: a full table is emptied — the keys without a photo in a table of their own, so that scanning
    /// for photos does not push out the photos being read.
    public final class Recent: Sendable {
        /// The default lifetime.
        public static let lifetime = Duration.seconds(1)
        static let capacity = 10_000
        let lifetime: Duration
        private struct Entry {
            var media: Media?
            var writes: Int
            var readAt: ContinuousClock.Instant
        }
        private struct Name: Hashable {
            var key: String
            var edge: Int?
        }
        private let found = Mutex<[Name: Entry]>([:])
        private let missing = Mutex<[Name: Entry]>([:])

        init(lifetime: Duration) { self.lifetime = lifetime }

        /// The record kept for `key` (`.some(nil)`: kept as having none), or nil when nothing valid is kept.
        func lookup(_ key: String, edge: Int?, writes: Int, now: ContinuousClock.Instant) -> Media?? {
            let name = Name(key: key, edge: edge)
            if let kept = valid(name, in: found, writes: writes, now: now) { return .some(kept.media) }
            if let kept = valid(name, in: missing, writes: writes, now: now) { return .some(kept.media) }
            return nil
        }

        func keep(_ media: Media?, key: String, edge: Int?, writes: Int, now: ContinuousClock.Instant) {
            let name = Name(key: key, edge: edge), entry = Entry(media: media, writes: writes, readAt: now)
            if media == nil {
                Self.put(entry, name, in: missing)
                found.withLock { $0[name] = nil }
            } else {
                Self.put(entry, name, in: found)
                missing.withLock { $0[name] = nil }
            }
        }

        /// The entry for `name` in `table` if it is still valid (an invalid one is dropped).
        private func valid(_ name: Name, in table: borrowing Mutex<[Name: Entry]>, writes: Int, now: ContinuousClock.Instant) -> Entry? {
            table.withLock { entries in
                guard let entry = entries[name] else { return nil }
                guard entry.writes == writes, now - entry.readAt < lifetime else {
                    entries[name] = nil
                    return nil
                }
                return entry
            }
        }

        private static func put(_ entry: Entry, _ name: Name, in table: borrowing Mutex<[Name: Entry]>) {
            table.withLock { entries in
                if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
                entries[name] = entry
            }
        }
    }

    /// 128 random bits from the system's generator, in hex: unguessable.
    static func newToken() -> String { randomHex(byteCount: 16) }

    /// A photo as the intake stored it: the photo, and its thumbnails.
    public struct StoredObjects: Sendable {
        public var photo: StoredObject
        public var thumbnails: StoredThumbnails
        /// The photo's SSIMULACRA2 score (`PrepareReport.score`).
        public var score: Double?
        /// Its placeholder (`PrepareReport.placeholder`).
        public var placeholder: String? = nil
        /// When it was taken (`PrepareReport.takenAt`), nil when not to be kept.
        public var takenAt: String? = nil
        /// The focal point its square thumbnails were centred on, when the client gave one.
        public var focus: FocalPoint? = nil
        /// Why the reviewer quarantined it (nil: it did not).
        public var quarantine: String? = nil

        /// Where each object is: the photo, its thumbnails and their WebPs.
        var locations: [String] { [photo.location] + thumbnails.flatMap { [$0.object.location] + ($0.webp.map { [$0.location] } ?? []) } }
    }

    /// One object in storage: where, and what readers are told of its bytes.
    public struct StoredObject: Sendable {
        public var location: String
        public var content: Content
    }

    /// What readers are told of a photo's bytes: their SHA-256 (the strong `ETag`) and their count.
    public struct Content: Sendable {
        public var sha256: String
        public var size: Int64

        public init(of bytes: [UInt8]) {
            sha256 = hex(SHA256.hash(data: bytes))
            size = Int64(bytes.count)
        }
    }
}
