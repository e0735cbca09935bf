public import Foundation
import GRDB
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
    /// notification per other participant are written in one transaction. The photo (JPEG or PNG) is
    /// prepared with the `group` preset and uploaded to `group_photos/{groupId}/photo.jpg` in the
    /// background: the group is returned at once, and stays whatever becomes of its photo.
    ///
    /// `id`: the new group's id chosen by the client (a UUID), which makes the creation safe to send
    /// again: when the group exists already, created by the same caller, it is returned as it is
    /// (`photoJob` nil, nothing written); created by someone else, the call is refused.
    public func createGroup(
        creator: String, name: String, participants: [String], photo: PhotoInput? = nil, id: String? = nil
    ) throws(ServiceError) -> Created {
        let (name, others, groupId) = try GroupRules.creation(creator: creator, name: name, participants: participants, id: id)
        if id != nil, let existing = try database.read({ db in try ChatGroup.fetchOne(db, key: groupId) }) {
            guard existing.createdBy == creator else { throw .notAllowed("group \(groupId) exists and was created by someone else") }
            return Created(group: existing, members: try members(of: groupId), photoJob: nil)
        }
        let original = try photo?.load()
        let job = try original.map { bytes throws(ServiceError) in
            try newJob(kind: .group, caller: creator, subject: groupId, path: .groupPhoto(groupId: groupId), preset: .group, original: bytes, staging: jobs.staging)
        }
        let created: Created
        do {
            created = try database.write { db in
                try db.requireUsers([creator])
                try db.requireUsers(others)
                let creatorName = try User.fetchOne(db, key: creator)!.displayName
                let now = Date()
                let group = ChatGroup(
                    id: groupId, name: name, createdBy: creator, photoURL: nil, photoState: job == nil ? .none : .pending, photoError: nil,
                    createdAt: now, updatedAt: now)
                try group.insert(db)
                let members = [GroupMember(groupId: groupId, userId: creator, isAdmin: true)]
                    + others.map { GroupMember(groupId: groupId, userId: $0, isAdmin: false) }
                for member in members { try member.insert(db) }
                var message = Message(
                    id: nil, groupId: groupId, sender: "system", text: GroupRules.createdMessage(creatorName: creatorName), isSystem: true,
                    createdAt: now)
                try message.insert(db)
                for user in others {
                    var notification = Notification(
                        id: nil, userId: user, groupId: groupId, kind: "groupCreated", deepLink: "photoprep://groups/\(groupId)", createdAt: now)
                    try notification.insert(db)
                }
                try job?.insert(db)
                return Created(group: group, members: members, photoJob: job?.id)
            }
        } catch {
            if let job { try? FileManager.default.removeItem(atPath: job.originalPath) }
            throw error
        }
        if let job { jobs.start(job.id) }
        return created
    }

    /// Replaces the group's photo; only its admins may.
    @discardableResult
    public func setPhoto(caller: String, groupId: String, photo: PhotoInput) throws(ServiceError) -> String {
        let path = StoragePath.groupPhoto(groupId: try StorageRules.validated(groupId, "group id"))
        try authorize(caller: caller, path: path)
        return try jobs.submit(kind: .group, caller: caller, subject: groupId, path: path, preset: .group, photo: photo) { db in
            try PhotoJobs.mirror(.group, subject: groupId, state: .pending, error: nil, url: nil, db: db)
        }
    }

    /// Renames the group; only its admins may.
    public func rename(caller: String, groupId: String, to name: String) throws(ServiceError) {
        let name = try GroupRules.normalizedName(name)
        try database.write { db in
            try db.requireUsers([caller])
            guard try isAdmin(caller, of: groupId, db) else { throw ServiceError.notAllowed("only the admins of group \(groupId) rename it") }
            try db.execute(sql: "UPDATE chatGroup SET name = ?, updatedAt = ? WHERE id = ?", arguments: [name, Date(), groupId])
        }
    }

    /// Adds and removes members; the group's admins only. Added users must be known; the group keeps at
    /// most 256 members and at least one admin. Returns the members afterwards.
    @discardableResult
    public func changeMembers(caller: String, groupId: String, add: [String], remove: [String]) throws(ServiceError) -> [GroupMember] {
        for id in add + remove { _ = try StorageRules.validated(id, "user id") }
        return try database.write { db in
            try db.requireUsers([caller])
            guard try isAdmin(caller, of: groupId, db) else { throw ServiceError.notAllowed("only the admins of group \(groupId) change its members") }
            var seen = Set<String>()
            let added = add.filter { seen.insert($0).inserted && !remove.contains($0) }
            try db.requireUsers(added)
            for user in added where try !GroupMember.exists(db, key: ["groupId": groupId, "userId": user]) {
                try GroupMember(groupId: groupId, userId: user, isAdmin: false).insert(db)
            }
            for user in Set(remove) { _ = try GroupMember.deleteOne(db, key: ["groupId": groupId, "userId": user]) }
            let members = try GroupMember.filter(sql: "groupId = ?", arguments: [groupId]).fetchAll(db)
            guard members.count <= GroupRules.maxMembers else { throw ServiceError.tooManyMembers(members.count) }
            guard members.contains(where: \.isAdmin) else { throw ServiceError.invalidState("a group keeps at least one admin") }
            try db.execute(sql: "UPDATE chatGroup SET updatedAt = ? WHERE id = ?", arguments: [Date(), groupId])
            return members
        }
    }

    /// The rules for writing `path`, checked against the database: a known caller, an admin of the group.
    func authorize(caller: String, path: StoragePath) throws(ServiceError) {
        try database.read { db in
            try db.requireUsers([caller])
            if case .groupPhoto(let group) = path, try !ChatGroup.exists(db, key: group) { throw ServiceError.notFound("group \(group)") }
            try StorageRules.authorize(caller: caller, writing: path) { group in try isAdmin(caller, of: group, db) }
        }
    }

    /// The groups `user` is a member of, newest activity first (`updatedAt`, then id), at most `limit`,
    /// starting after `cursor` (the `nextCursor` of the previous page).
    public func groups(of user: String, limit: Int = 50, after cursor: GroupCursor? = nil) throws(ServiceError) -> (groups: [ChatGroup], nextCursor: GroupCursor?) {
        let limit = max(1, min(limit, 200))
        let groups = try database.read { db in
            var sql = "SELECT chatGroup.* FROM chatGroup JOIN groupMember ON groupMember.groupId = chatGroup.id WHERE groupMember.userId = ?"
            var arguments: StatementArguments = [user]
            if let cursor {
                sql += " AND (chatGroup.updatedAt < ? OR (chatGroup.updatedAt = ? AND chatGroup.id < ?))"
                arguments += [cursor.updatedAt, cursor.updatedAt, cursor.id]
            }
            sql += " ORDER BY chatGroup.updatedAt DESC, chatGroup.id DESC LIMIT ?"
            arguments += [limit + 1]
            return try ChatGroup.fetchAll(db, sql: sql, arguments: arguments)
        }
        let page = Array(groups.prefix(limit))
        return (page, groups.count > limit ? page.last.map { GroupCursor(updatedAt: $0.updatedAt, id: $0.id) } : nil)
    }

    public func group(_ id: String) throws(ServiceError) -> ChatGroup? {
        try database.read { db in try ChatGroup.fetchOne(db, key: id) }
    }

    public func members(of id: String) throws(ServiceError) -> [GroupMember] {
        try database.read { db in try GroupMember.filter(sql: "groupId = ?", arguments: [id]).fetchAll(db) }
    }

    /// The group's messages in order, after message id `after` (0: from the first), at most `limit`.
    public func messages(of id: String, after: Int64 = 0, limit: Int = .max) throws(ServiceError) -> [Message] {
        try database.read { db in
            try Message.filter(sql: "groupId = ? AND id > ?", arguments: [id, after]).order(sql: "id").limit(max(1, limit)).fetchAll(db)
        }
    }

    /// The user's notifications in order, after notification id `after`, at most `limit`.
    public func notifications(for userId: String, after: Int64 = 0, limit: Int = .max) throws(ServiceError) -> [Notification] {
        try database.read { db in
            try Notification.filter(sql: "userId = ? AND id > ?", arguments: [userId, after]).order(sql: "id").limit(max(1, limit)).fetchAll(db)
        }
    }
}

func isAdmin(_ user: String, of group: String, _ db: Database) throws -> Bool {
    try Bool.fetchOne(db, sql: "SELECT isAdmin FROM groupMember WHERE groupId = ? AND userId = ?", arguments: [group, user]) ?? false
}

/// Where a page of a user's groups ends: opaque to clients (`token`), stable while groups change.
public struct GroupCursor: Sendable, Equatable {
    public var updatedAt: Date
    public var id: String

    /// The cursor as a URL-safe string.
    public var token: String {
        Data("\(updatedAt.timeIntervalSince1970)|\(id)".utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    public init(updatedAt: Date, id: String) {
        self.updatedAt = updatedAt
        self.id = id
    }

    /// nil for anything that is not a token this server made.
    public init?(token: String) {
        guard let data = Data(base64URL: token), let text = String(data: data, encoding: .utf8) else { return nil }
        let parts = text.split(separator: "|", maxSplits: 1)
        guard parts.count == 2, let seconds = Double(parts[0]), seconds.isFinite else { return nil }
        self.init(updatedAt: Date(timeIntervalSince1970: seconds), id: String(parts[1]))
    }
}

extension Data {
    /// Base64url (RFC 4648 §5: `-` and `_`, padding optional), as in JWTs and page cursors.
    init?(base64URL text: String) {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        self.init(base64Encoded: base64)
    }
}
