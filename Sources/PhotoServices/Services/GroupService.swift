import Foundation
import Crypto
import PhotoFiles
import SQLKit
import PhotoPrep

/// Group creation and the group photo.
public struct GroupService: Sendable {
    let database: AppDatabase
    let jobs: PhotoJobs

    /// A group just created; its photo (if any) is on its way in the background as `photoJob`.
    public struct Created: Sendable {
        public var group: ChatGroup
        public var members: [GroupMember]
        public var photoJob: String?
    }

    /// Creates a group: the name trimmed (1–50 characters, control characters removed), the other
    /// participants de-duplicated (at least 2, at most 256 members with the creator), the creator its
    /// first admin. The group, its members, the system message "{creator} created the group" and one
    /// notification per other participant are written in one transaction. The photo (JPEG, PNG, HEIC, AVIF or WebP) is
    /// prepared with the `group` preset and uploaded to `group_photos/{groupId}/photo.jpg` in the
    /// background: the group is returned at once, and stays whatever becomes of its photo.
    ///
    /// `id`: the new group's id chosen by the client (a UUID), which makes the creation safe to send
    /// again: when the group exists already, created by the same caller, it is returned as it is
    /// (`photoJob` nil, nothing written); any other creation under an existing id — another name or other
    /// participants, or someone else's group — is refused alike (409), so the refusal does not say whose it is.
    public func createGroup(
        creator: String, name: String, participants: [String], photo: PhotoInput? = nil, id: String? = nil
    ) async throws(ServiceError) -> Created {
        let (name, others, groupId) = try GroupRules.creation(creator: creator, name: name, participants: participants, id: id)
        let digest = Self.creationDigest(name: name, others: others)
        if id != nil, let existing = try await group(groupId) {
            let taken = ServiceError.invalidState("group \(groupId) cannot be created with this id: a new group needs a new id (or Idempotency-Key)")
            guard existing.createdBy == creator else { throw taken }
            // The same creation sent again gets the group; another one under its id is refused, not answered with a
            // group that is not what was asked for (groups made before their creation was recorded: no check).
            let recorded = try await database.read { db in
                try await db.select().column("digest").from("groupCreation").where("groupId", .equal, groupId).first(decodingColumn: "digest", as: String.self)
            }
            if let recorded, recorded != digest { throw taken }
            return Created(group: existing, members: try await members(of: groupId), photoJob: nil)
        }
        let original = try photo?.load()
        let job = try original.map { bytes throws(ServiceError) in
            try newJob(kind: .group, caller: creator, subject: groupId, path: .groupPhoto(groupId: groupId), original: bytes, staging: jobs.staging,
                destination: jobs.store.destination)
        }
        let created: Created
        do {
            created = try await database.write { db in
                try await Users.require([creator], db)
                try await Users.require(others, db)
                let creatorName = try await Users.find(creator, db)!.displayName
                let now = Date()
                let group = ChatGroup(
                    id: groupId, name: name, createdBy: creator, photoState: job == nil ? .none : .pending, photoError: nil,
                    createdAt: now, updatedAt: now)
                try await db.insert(into: "chatGroup").model(group).run()
                try await db.insert(into: "groupCreation").columns("groupId", "digest").values(SQLBind(groupId), SQLBind(digest)).run()
                let members = [GroupMember(groupId: groupId, userId: creator, isAdmin: true)]
                    + others.map { GroupMember(groupId: groupId, userId: $0, isAdmin: false) }
                try await db.insert(into: "groupMember").models(members).run()
                let message = Message(
                    id: nil, groupId: groupId, sender: "system", text: GroupRules.createdMessage(creatorName: creatorName), isSystem: true,
                    createdAt: now)
                try await db.insert(into: "message").model(message).run()
                let notifications = others.map { user in
                    Notification(id: nil, userId: user, groupId: groupId, kind: "groupCreated", deepLink: "photoprep://groups/\(groupId)", createdAt: now)
                }
                if !notifications.isEmpty { try await db.insert(into: "notification").models(notifications).run() }
                if let job { try await JobStore.insert(job, db) }
                try await Outbox.record(
                    .groupCreated, subject: "group:\(groupId)",
                    data: ["groupId": groupId, "name": name, "createdBy": creator, "members": members.map(\.userId)], at: now, db)
                return Created(group: group, members: members, photoJob: job?.id)
            }
        } catch {
            if let job { try? FileManager.default.removeItem(atPath: job.originalPath) }
            throw error
        }
        if let job { jobs.start(job.id) }
        return created
    }

    /// A creation's name and other participants (in any order), as the digest `groupCreation` keeps.
    static func creationDigest(name: String, others: [String]) -> String {
        let text = ([name] + others.sorted()).joined(separator: "\u{0}")
        return hex(SHA256.hash(data: Data(text.utf8)))
    }

    /// Replaces the group's photo; only its admins may.
    @discardableResult
    public func setPhoto(caller: String, groupId: String, photo: PhotoInput) async throws(ServiceError) -> String {
        let path = StoragePath.groupPhoto(groupId: try StorageRules.validated(groupId, "group id"))
        try await authorize(caller: caller, path: path)
        return try await jobs.submit(kind: .group, caller: caller, subject: groupId, path: path, photo: photo) { db in
            try await JobStore.mirror(.group, subject: groupId, state: .pending, error: nil, db)
        }
    }

    /// Renames the group; only its admins may.
    public func rename(caller: String, groupId: String, to name: String) async throws(ServiceError) {
        let name = try GroupRules.normalizedName(name)
        try await database.write { db in
            try await Users.require([caller], db)
            guard try await Users.isAdmin(caller, of: groupId, db) else { throw ServiceError.notAllowed("only the admins of group \(groupId) rename it") }
            try await db.update("chatGroup").set("name", to: name).set("updatedAt", to: Date()).where("id", .equal, groupId).run()
            try await Outbox.record(.groupRenamed, subject: "group:\(groupId)", data: ["groupId": groupId, "name": name, "by": caller], db)
        }
    }

    /// Adds and removes members; the group's admins only. Added users must be known; the group keeps at
    /// most 256 members and at least one admin. Returns the members afterwards.
    @discardableResult
    public func changeMembers(caller: String, groupId: String, add: [String], remove: [String]) async throws(ServiceError) -> [GroupMember] {
        for id in add + remove { _ = try StorageRules.validated(id, "user id") }
        return try await database.write { db in
            try await Users.require([caller], db)
            guard try await Users.isAdmin(caller, of: groupId, db) else {
                throw ServiceError.notAllowed("only the admins of group \(groupId) change its members")
            }
            var seen = Set<String>()
            let added = add.filter { seen.insert($0).inserted && !remove.contains($0) }
            try await Users.require(added, db)
            let current = Set(try await Self.members(of: groupId, db).map(\.userId))
            let new = added.filter { !current.contains($0) }.map { GroupMember(groupId: groupId, userId: $0, isAdmin: false) }
            if !new.isEmpty { try await db.insert(into: "groupMember").models(new).run() }
            if !remove.isEmpty { try await db.delete(from: "groupMember").where("groupId", .equal, groupId).where("userId", .in, Array(Set(remove))).run() }
            let members = try await Self.members(of: groupId, db)
            guard members.count <= GroupRules.maxMembers else { throw ServiceError.tooManyMembers(members.count) }
            guard members.contains(where: \.isAdmin) else { throw ServiceError.invalidState("a group keeps at least one admin") }
            try await db.update("chatGroup").set("updatedAt", to: Date()).where("id", .equal, groupId).run()
            let removed = Set(remove).intersection(current).subtracting(members.map(\.userId))
            if !new.isEmpty || !removed.isEmpty {
                try await Outbox.record(
                    .groupMembersChanged, subject: "group:\(groupId)",
                    data: ["groupId": groupId, "added": new.map(\.userId), "removed": removed.sorted(), "members": members.map(\.userId), "by": caller], db)
            }
            return members
        }
    }

    /// The rules for writing `path`, checked against the database: a known caller, an admin of the group.
    func authorize(caller: String, path: StoragePath) async throws(ServiceError) {
        let admin = try await database.read { db -> Bool in
            try await Users.require([caller], db)
            guard case .groupPhoto(let group) = path else { return false }
            guard try await db.select().column("id").from("chatGroup").where("id", .equal, group).first() != nil else {
                throw ServiceError.notFound("group \(group)")
            }
            return try await Users.isAdmin(caller, of: group, db)
        }
        try StorageRules.authorize(caller: caller, writing: path) { _ in admin }
    }

    /// The groups `user` is a member of, newest activity first (`updatedAt`, then id), at most `limit`,
    /// starting after `cursor` (the `nextCursor` of the previous page).
    public func groups(of user: String, limit: Int = 50, after cursor: GroupCursor? = nil) async throws(ServiceError) -> (
        groups: [ChatGroup], nextCursor: GroupCursor?
    ) {
        let limit = max(1, min(limit, 200))
        let sqlite = database.kind == .sqlite
        let rows = try await database.read { db in
            var query = db.select().columns(SQLColumn(SQLLiteral.all, table: SQLIdentifier("chatGroup"))).from("chatGroup")
                .join("groupMember", on: SQLColumn("groupId", table: "groupMember"), .equal, SQLColumn("id", table: "chatGroup"))
                .where(SQLColumn("userId", table: "groupMember"), .equal, SQLBind(user))
            if let cursor {
                let updatedAt = SQLColumn("updatedAt", table: "chatGroup")
                // SQLite holds seconds since 1970 (compared as they are); PostgreSQL microseconds.
                let position = sqlite ? SQLBind(cursor.seconds) : SQLBind(cursor.updatedAt)
                query = query.where { page in
                    page.where(updatedAt, .lessThan, position)
                        .orWhere { $0.where(updatedAt, .equal, position).where(SQLColumn("id", table: "chatGroup"), .lessThan, SQLBind(cursor.id)) }
                }
            }
            return try await query.orderBy(SQLOrderBy(expression: SQLColumn("updatedAt", table: "chatGroup"), direction: SQLDirection.descending))
                .orderBy(SQLOrderBy(expression: SQLColumn("id", table: "chatGroup"), direction: SQLDirection.descending)).limit(limit + 1).all()
                .map { row in
                    (try row.decode(model: ChatGroup.self),
                     sqlite ? try row.decode(column: "updatedAt", as: Double.self) : try row.decode(column: "updatedAt", as: Date.self).timeIntervalSince1970)
                }
        }
        let page = Array(rows.prefix(limit))
        return (page.map(\.0), rows.count > limit ? page.last.map { GroupCursor(seconds: $0.1, id: $0.0.id) } : nil)
    }

    public func group(_ id: String) async throws(ServiceError) -> ChatGroup? {
        try await database.read { db in try await db.select().columns("*").from("chatGroup").where("id", .equal, id).first(decoding: ChatGroup.self) }
    }

    public func members(of id: String) async throws(ServiceError) -> [GroupMember] {
        try await database.read { db in try await Self.members(of: id, db) }
    }

    /// The admins first, each part by user id.
    static func members(of id: String, _ db: any SQLDatabase) async throws -> [GroupMember] {
        try await db.select().columns("*").from("groupMember").where("groupId", .equal, id).orderBy("isAdmin", .descending).orderBy("userId")
            .all(decoding: GroupMember.self)
    }

    /// The group's messages in order, after message id `after` (0: from the first), at most `limit`.
    public func messages(of id: String, after: Int64 = 0, limit: Int = .max) async throws(ServiceError) -> [Message] {
        try await database.read { db in
            try await db.select().columns("*").from("message").where("groupId", .equal, id).where("id", .greaterThan, after)
                .orderBy("id").limit(max(1, min(limit, 1 << 31))).all(decoding: Message.self)
        }
    }

    /// The user's notifications in order, after notification id `after`, at most `limit`.
    public func notifications(for userId: String, after: Int64 = 0, limit: Int = .max) async throws(ServiceError) -> [Notification] {
        try await database.read { db in
            try await db.select().columns("*").from("notification").where("userId", .equal, userId).where("id", .greaterThan, after)
                .orderBy("id").limit(max(1, min(limit, 1 << 31))).all(decoding: Notification.self)
        }
    }
}
