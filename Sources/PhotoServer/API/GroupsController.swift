import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import PhotoFiles
import PhotoServices

/// `/v1/groups…` and `/v1/notifications` over the group service: creating groups (idempotent with a client
/// id or `Idempotency-Key`), the caller's groups, one group, its members, messages and photo. A group is
/// visible to its members only: anyone else gets 404, as for a group that does not exist.
struct GroupsController: Sendable {
    let groups: GroupService
    let photos: StoredPhotos
    let intake: PhotoIntake
    let uploads: UploadsInProgress
    let links: DownloadLinks

    func addRoutes(to v1: RouterGroup<ServerContext>) {
        v1.post("groups", use: create)
        v1.get("groups", use: list)
        v1.get("groups/:id", use: group)
        v1.patch("groups/:id", use: rename)
        v1.post("groups/:id/members", use: changeMembers)
        v1.get("groups/:id/messages", use: messages)
        v1.get("groups/:id/photo", use: photo)
        v1.post("groups/:id/photo/token", use: regenerateToken)
        v1.put("groups/:id/photo/focus", use: setFocus)
        v1.get("notifications", use: notifications)
    }

    @Sendable func create(_ request: Request, context: ServerContext) async throws -> EditedResponse<GroupBody> {
        let caller = try context.caller()
        let body = try await request.decode(as: CreateGroup.self, context: context)
        // An Idempotency-Key stands for a client id: the same key from the same caller names the same group.
        var id = body.id
        if let key = request.headers[HTTPField.Name("Idempotency-Key")!] {
            guard (1...255).contains(key.unicodeScalars.count) else {
                throw Problem(.badRequest, "idempotency-key", "Idempotency-Key must be 1–255 characters")
            }
            if id == nil { id = Self.uuid(from: "\(caller.id)\n\(key)") }
        }
        let created = try await groups.createGroup(creator: caller.id, name: body.name, participants: body.participants, id: id)
        return EditedResponse(
            status: .created, headers: [.location: "/v1/groups/\(created.group.id)"],
            response: try await links.group(created.group, members: created.members, for: try context.caller().id, request))
    }

    @Sendable func list(_ request: Request, context: ServerContext) async throws -> GroupPage {
        let caller = try context.caller()
        let limit = try Paging.limit(request)
        var cursor: GroupCursor?
        if let token = request.uri.queryParameters.get("cursor"), !token.isEmpty {
            guard let parsed = GroupCursor(token: token) else { throw Problem(.badRequest, "cursor", "not a cursor this server gave", field: "cursor") }
            cursor = parsed
        }
        let page = try await groups.groups(of: caller.id, limit: limit, after: cursor)
        var withMembers: [(ChatGroup, [GroupMember])] = []
        for group in page.groups { withMembers.append((group, try await groups.members(of: group.id))) }
        return GroupPage(groups: try await links.groups(withMembers, for: try context.caller().id, request), nextCursor: page.nextCursor?.token)
    }

    @Sendable func group(_ request: Request, context: ServerContext) async throws -> GroupBody {
        let (group, members) = try await memberGroup(context)
        return try await links.group(group, members: members, for: try context.caller().id, request)
    }

    /// Renames the group: its admins only (a member who is not: 403; anyone else: 404).
    @Sendable func rename(_ request: Request, context: ServerContext) async throws -> GroupBody {
        let (group, _) = try await memberGroup(context)
        let body = try await request.decode(as: RenameGroup.self, context: context)
        try await groups.rename(caller: try context.caller().id, groupId: group.id, to: body.name)
        let (renamed, members) = try await memberGroup(context)
        return try await links.group(renamed, members: members, for: try context.caller().id, request)
    }

    /// Adds and removes members: the group's admins only (a member who is not: 403; anyone else: 404).
    @Sendable func changeMembers(_ request: Request, context: ServerContext) async throws -> GroupBody {
        let (group, _) = try await memberGroup(context)
        let body = try await request.decode(as: ChangeMembers.self, context: context)
        let members: [GroupMember]
        do {
            members = try await groups.changeMembers(caller: try context.caller().id, groupId: group.id, add: body.add ?? [], remove: body.remove ?? [])
        } catch let error as ServiceError {
            // The rules speak of participants; this request's field for them is `add`.
            var problem = Problem(error)
            if problem.field == "participants" { problem.field = "add" }
            throw problem
        }
        guard let changed = try await groups.group(group.id) else { throw Problem(.notFound, "not-found", "no such group") }
        return try await links.group(changed, members: members, for: try context.caller().id, request)
    }

    /// The group's messages (the system message first) after the id `after`; members only.
    @Sendable func messages(_ request: Request, context: ServerContext) async throws -> MessagePage {
        let (group, _) = try await memberGroup(context)
        let limit = try Paging.limit(request)
        let found = try await groups.messages(of: group.id, after: try Paging.after(request), limit: limit)
        return MessagePage(messages: found.map(MessageBody.init), next: found.count == limit ? found.last?.id : nil)
    }

    /// The group photo's state: none, uploading (with the bytes the server acknowledged), ready (URL) or
    /// failed (reason).
    @Sendable func photo(_ request: Request, context: ServerContext) async throws -> PhotoBody {
        let (group, _) = try await memberGroup(context)
        let key = StoragePath.groupPhoto(groupId: group.id).key
        return try await links.photo(try await uploads.photo(where: { $0.key == key }) ?? PhotoBody(group), key: key, for: try context.caller().id, request)
    }

    /// Centres the group photo's square thumbnails on a focal point (null: the attention rule's choice): its admins
    /// only — a member who is not one gets 422 naming `focus` (a focal point for someone else's photo), and nothing changes.
    @Sendable func setFocus(_ request: Request, context: ServerContext) async throws -> PhotoBody {
        let (group, _) = try await memberGroup(context)
        let focus = try await request.decode(as: SetFocus.self, context: context).point()
        let caller = try context.caller().id
        let photo: StoredPhoto
        do {
            photo = try await intake.refocus(.groupPhoto(groupId: group.id), focus: focus, caller: caller)
        } catch .notAllowed(let reason) {  // the storage rule's refusal, before anything changed
            throw Problem(.unprocessableContent, "focus", "focus: \(reason)", field: "focus")
        }
        return try await links.photo(PhotoBody(group), key: photo.key, for: try context.caller().id, request)
    }

    /// A new download URL for the group's photo (its admins only); the previous one stops working.
    @Sendable func regenerateToken(_ request: Request, context: ServerContext) async throws -> PhotoBody {
        let (group, _) = try await memberGroup(context)
        let photo = try await photos.regenerateToken(caller: try context.caller().id, .groupPhoto(groupId: group.id))
        return try await links.photo(PhotoBody(group), key: photo.key, for: try context.caller().id, request)
    }

    /// The caller's notifications after the id `after`.
    @Sendable func notifications(_ request: Request, context: ServerContext) async throws -> NotificationPage {
        let caller = try context.caller()
        let limit = try Paging.limit(request)
        let found = try await groups.notifications(for: caller.id, after: try Paging.after(request), limit: limit)
        return NotificationPage(notifications: found.map(NotificationBody.init), next: found.count == limit ? found.last?.id : nil)
    }

    /// The group named by the path, if the caller is a member (404 otherwise, as for a group that does not exist).
    private func memberGroup(_ context: ServerContext) async throws -> (ChatGroup, [GroupMember]) {
        let caller = try context.caller()
        let id = context.parameter("id")
        guard let group = try await groups.group(id) else { throw Problem(.notFound, "not-found", "no such group") }
        let members = try await groups.members(of: id)
        guard members.contains(where: { $0.userId == caller.id }) else { throw Problem(.notFound, "not-found", "no such group") }
        return (group, members)
    }

    /// A name-based UUID (SHA-256 of `name`, version and variant bits set as RFC 9562's version 8).
    static func uuid(from name: String) -> String {
        var bytes = Array(SHA256.hash(data: Data(name.utf8)).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x80
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let hex = PhotoFiles.hex(bytes)
        let parts = [hex.prefix(8), hex.dropFirst(8).prefix(4), hex.dropFirst(12).prefix(4), hex.dropFirst(16).prefix(4), hex.dropFirst(20)]
        return parts.joined(separator: "-")
    }
}
