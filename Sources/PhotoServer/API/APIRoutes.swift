import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import PhotoServices

/// The services over HTTP at `/v1/` (described by `openapi.yaml`, served at `/openapi.yaml`): the
/// caller's profile, group creation (idempotent with a client id or `Idempotency-Key`), the caller's
/// groups, one group and its photo's state. The same bearer JWT as the uploads; JSON; errors as RFC 9457
/// problem details. Groups are visible to their members only: anyone else gets 404.
struct APIRoutes: Sendable {
    let services: PhotoServices
    let store: any PartialUploadStore

    func register(on router: Router<ServerContext>) {
        router.get("/openapi.yaml") { _, _ in Self.document() }
        let v1 = router.group("v1").add(middleware: ProblemMiddleware())
        v1.get("me") { _, context in try await me(Self.caller(context)) }
        v1.patch("me") { request, context in try await updateMe(Self.caller(context), request) }
        v1.get("users") { request, context in try await users(Self.caller(context), request) }
        v1.get("users/:id") { _, context in
            _ = try Self.caller(context)
            return try await user(id: context.parameters.get("id") ?? "")
        }
        v1.get("me/photo") { _, context in try await profilePhoto(Self.caller(context)) }
        v1.delete("me/photo") { _, context in try await deleteProfilePhoto(Self.caller(context)) }
        v1.get("albums/:album/photos") { _, context in
            try await albumPhotos(Self.caller(context), album: context.parameters.get("album") ?? "")
        }
        v1.delete("albums/:album/photos/:photo") { _, context in
            try await deleteAlbumPhoto(Self.caller(context), album: context.parameters.get("album") ?? "", photo: context.parameters.get("photo") ?? "")
        }
        v1.get("notifications") { request, context in try await notifications(Self.caller(context), request) }
        v1.post("groups") { request, context in try await create(Self.caller(context), request) }
        v1.get("groups") { request, context in try await groups(Self.caller(context), request) }
        v1.get("groups/:id") { _, context in try await group(Self.caller(context), id: context.parameters.get("id") ?? "") }
        v1.patch("groups/:id") { request, context in try await rename(Self.caller(context), id: context.parameters.get("id") ?? "", request) }
        v1.post("groups/:id/members") { request, context in
            try await changeMembers(Self.caller(context), id: context.parameters.get("id") ?? "", request)
        }
        v1.get("groups/:id/messages") { request, context in
            try await messages(Self.caller(context), id: context.parameters.get("id") ?? "", request)
        }
        v1.get("groups/:id/photo") { _, context in try await photo(Self.caller(context), id: context.parameters.get("id") ?? "") }
    }

    /// The caller `BearerAuthentication` found; 401 without one.
    static func caller(_ context: ServerContext) throws(Problem) -> Caller {
        switch context.identity {
        case .success(let caller): return caller
        case .failure(let error): throw Problem(.unauthorized, "unauthenticated", "not authenticated: \(error.description)")
        }
    }

    // MARK: - Operations

    private func me(_ caller: Caller) async throws -> Response {
        guard let user = try await services.users.user(caller.id) else {
            throw Problem(.notFound, "unknown-user", "\(caller.id) is not a user of this service yet")
        }
        return try json(.ok, UserBody(user))
    }

    struct UpdateMe: Decodable {
        var displayName: String
    }

    private func updateMe(_ caller: Caller, _ request: Request) async throws -> Response {
        let body: UpdateMe = try await decode(request)
        guard try await services.users.user(caller.id) != nil else {
            throw Problem(.notFound, "unknown-user", "\(caller.id) is not a user of this service yet")
        }
        return try json(.ok, UserBody(try await services.users.rename(caller.id, to: body.displayName)))
    }

    /// Users by display-name prefix (a participant picker), never the caller, by name then id.
    private func users(_ caller: Caller, _ request: Request) async throws -> Response {
        let query = request.uri.queryParameters
        let limit = try Self.limit(query.get("limit"))
        var after: User?
        if let cursor = query.get("cursor") {
            guard let user = try await services.users.user(cursor) else { throw Problem(.badRequest, "cursor", "not a cursor this server gave", field: "cursor") }
            after = user
        }
        let found = try await services.users.search(prefix: query.get("prefix") ?? "", excluding: caller.id, limit: limit, after: after)
        return try json(.ok, UserPage(users: found.map(UserBody.init), nextCursor: found.count == limit ? found.last?.id : nil))
    }

    private func user(id: String) async throws -> Response {
        guard let user = try await services.users.user(id) else { throw Problem(.notFound, "not-found", "no such user") }
        return try json(.ok, UserBody(user))
    }

    /// The caller's notifications after the id `after`.
    private func notifications(_ caller: Caller, _ request: Request) async throws -> Response {
        let query = request.uri.queryParameters
        let limit = try Self.limit(query.get("limit"))
        let found = try await services.groups.notifications(for: caller.id, after: try Self.after(query.get("after")), limit: limit)
        return try json(.ok, NotificationPage(notifications: found.map(NotificationBody.init), next: found.count == limit ? found.last?.id : nil))
    }

    struct Rename: Decodable {
        var name: String
    }

    /// Renames the group: its admins only (a member who is not: 403; anyone else: 404).
    private func rename(_ caller: Caller, id: String, _ request: Request) async throws -> Response {
        _ = try await memberGroup(caller, id: id)
        let body: Rename = try await decode(request)
        try await services.groups.rename(caller: caller.id, groupId: id, to: body.name)
        let (group, members) = try await memberGroup(caller, id: id)
        return try json(.ok, GroupBody(group, members: members))
    }

    /// The group's messages (the system message first) after the id `after`; members only.
    private func messages(_ caller: Caller, id: String, _ request: Request) async throws -> Response {
        _ = try await memberGroup(caller, id: id)
        let query = request.uri.queryParameters
        let limit = try Self.limit(query.get("limit"))
        let found = try await services.groups.messages(of: id, after: try Self.after(query.get("after")), limit: limit)
        return try json(.ok, MessagePage(messages: found.map(MessageBody.init), next: found.count == limit ? found.last?.id : nil))
    }

    struct ChangeMembers: Decodable {
        var add: [String]?
        var remove: [String]?
    }

    /// Adds and removes members: the group's admins only (a member who is not: 403; anyone else: 404).
    private func changeMembers(_ caller: Caller, id: String, _ request: Request) async throws -> Response {
        _ = try await memberGroup(caller, id: id)
        let body: ChangeMembers = try await decode(request)
        let members = try await services.groups.changeMembers(caller: caller.id, groupId: id, add: body.add ?? [], remove: body.remove ?? [])
        guard let group = try await services.groups.group(id) else { throw Problem(.notFound, "not-found", "no such group") }
        return try json(.ok, GroupBody(group, members: members))
    }

    /// The caller's profile picture: none, uploading (with the bytes the server acknowledged) or ready.
    private func profilePhoto(_ caller: Caller) async throws -> Response {
        guard let user = try await services.users.user(caller.id) else { throw Problem(.notFound, "unknown-user", "\(caller.id) is not a user of this service yet") }
        let prefix = "profile_images/\(caller.id)/"
        if let uploading = try await uploading(url: user.profilePhotoURL, where: { $0.owner == caller.id && $0.key.hasPrefix(prefix) }) {
            return try json(.ok, uploading)
        }
        return try json(.ok, PhotoBody(state: user.profilePhotoURL == nil ? "none" : "ready", url: user.profilePhotoURL, error: nil, acknowledgedBytes: nil, totalBytes: nil))
    }

    private func deleteProfilePhoto(_ caller: Caller) async throws -> Response {
        guard try await services.users.user(caller.id) != nil else { throw Problem(.notFound, "unknown-user", "\(caller.id) is not a user of this service yet") }
        try await services.profiles.deleteProfilePhoto(caller: caller.id)
        return Response(status: .noContent)
    }

    private func albumPhotos(_ caller: Caller, album: String) async throws -> Response {
        guard try await services.users.user(caller.id) != nil else { return try json(.ok, AlbumPage(photos: [])) }
        let photos = try await services.profiles.albumPhotos(caller: caller.id, album: album)
        return try json(.ok, AlbumPage(photos: photos.map(AlbumPhotoBody.init)))
    }

    /// Deletes one of the caller's album photos (404 for anyone else's, or one in another album).
    private func deleteAlbumPhoto(_ caller: Caller, album: String, photo: String) async throws -> Response {
        guard try await services.users.user(caller.id) != nil else { throw Problem(.notFound, "not-found", "no such photo") }
        guard try await services.profiles.albumPhotos(caller: caller.id, album: album).contains(where: { $0.id == photo }) else {
            throw Problem(.notFound, "not-found", "no such photo")
        }
        try await services.profiles.deleteAlbumPhoto(caller: caller.id, photoId: photo)
        return Response(status: .noContent)
    }

    static func limit(_ text: String?) throws -> Int {
        guard let text else { return 50 }
        guard let value = Int(text), (1...200).contains(value) else { throw Problem(.badRequest, "limit", "limit must be 1–200", field: "limit") }
        return value
    }

    static func after(_ text: String?) throws -> Int64 {
        guard let text else { return 0 }
        guard let value = Int64(text), value >= 0 else { throw Problem(.badRequest, "after", "after must be a message or notification id", field: "after") }
        return value
    }

    struct CreateGroup: Decodable {
        var name: String
        var participants: [String]
        var id: String?
    }

    private func create(_ caller: Caller, _ request: Request) async throws -> Response {
        let body: CreateGroup = try await decode(request)
        // An Idempotency-Key stands for a client id: the same key from the same caller names the same group.
        var id = body.id
        if id == nil, let key = request.headers[HTTPField.Name("Idempotency-Key")!] {
            guard !key.isEmpty, key.utf8.count <= 255 else { throw Problem(.badRequest, "idempotency-key", "Idempotency-Key must be 1–255 bytes") }
            id = Self.uuid(from: "\(caller.id)\n\(key)")
        }
        let created = try await services.groups.createGroup(creator: caller.id, name: body.name, participants: body.participants, id: id)
        return try json(.created, GroupBody(created.group, members: created.members), location: "/v1/groups/\(created.group.id)")
    }

    private func groups(_ caller: Caller, _ request: Request) async throws -> Response {
        let query = request.uri.queryParameters
        let limit = try Self.limit(query.get("limit"))
        var cursor: GroupCursor?
        if let token = query.get("cursor") {
            guard let parsed = GroupCursor(token: token) else { throw Problem(.badRequest, "cursor", "not a cursor this server gave", field: "cursor") }
            cursor = parsed
        }
        let page = try await services.groups.groups(of: caller.id, limit: limit, after: cursor)
        var bodies: [GroupBody] = []
        for group in page.groups { bodies.append(GroupBody(group, members: try await services.groups.members(of: group.id))) }
        return try json(.ok, GroupPage(groups: bodies, nextCursor: page.nextCursor?.token))
    }

    /// The group, if the caller is a member (404 otherwise, as for a group that does not exist).
    private func memberGroup(_ caller: Caller, id: String) async throws -> (ChatGroup, [GroupMember]) {
        guard let group = try await services.groups.group(id) else { throw Problem(.notFound, "not-found", "no such group") }
        let members = try await services.groups.members(of: id)
        guard members.contains(where: { $0.userId == caller.id }) else { throw Problem(.notFound, "not-found", "no such group") }
        return (group, members)
    }

    private func group(_ caller: Caller, id: String) async throws -> Response {
        let (group, members) = try await memberGroup(caller, id: id)
        return try json(.ok, GroupBody(group, members: members))
    }

    /// The group photo's state: none, uploading (with the bytes the server acknowledged), ready (URL) or
    /// failed (reason).
    private func photo(_ caller: Caller, id: String) async throws -> Response {
        let (group, _) = try await memberGroup(caller, id: id)
        let key = StoragePath.groupPhoto(groupId: group.id).key
        if let uploading = try await uploading(url: group.photoURL, where: { $0.key == key }) { return try json(.ok, uploading) }
        return try json(.ok, PhotoBody(group))
    }

    /// The state of the newest unfinished upload that `matches`, with the bytes the server acknowledged.
    private func uploading(url: String?, where matches: (TusUpload) -> Bool) async throws(UploadStoreFailure) -> PhotoBody? {
        guard let upload = try await store.unfinished().filter(matches).max(by: { $0.createdAt < $1.createdAt }) else { return nil }
        return PhotoBody(state: "uploading", url: url, error: nil, acknowledgedBytes: try await store.offset(upload.id), totalBytes: upload.length)
    }

    // MARK: - Plumbing

    private func decode<T: Decodable>(_ request: Request) async throws -> T {
        guard request.headers[.contentType]?.lowercased().hasPrefix("application/json") ?? false else {
            throw Problem(.unsupportedMediaType, "content-type", "the body must be application/json")
        }
        let buffer: ByteBuffer
        do { buffer = try await request.body.collect(upTo: 256 * 1024) } catch {
            throw Problem(.contentTooLarge, "body-too-large", "the body is larger than 256 KiB")
        }
        do {
            return try JSONDecoder().decode(T.self, from: Data(buffer.readableBytesView))
        } catch {
            throw Problem(.badRequest, "malformed-body", "the body is not the JSON this operation takes: \(error)")
        }
    }

    private func json(_ status: HTTPResponse.Status, _ value: some Encodable, location: String? = nil) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        var headers: HTTPFields = [.contentType: "application/json"]
        if let location { headers[.location] = location }
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: try encoder.encode(value))))
    }

    /// A name-based UUID (SHA-256 of `name`, version and variant bits set as RFC 9562's version 8).
    static func uuid(from name: String) -> String {
        var bytes = Array(SHA256.hash(data: Data(name.utf8)).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x80
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let hex = bytes.map { String(format: "%02x", $0) }.joined()
        let parts = [hex.prefix(8), hex.dropFirst(8).prefix(4), hex.dropFirst(12).prefix(4), hex.dropFirst(16).prefix(4), hex.dropFirst(20)]
        return parts.joined(separator: "-")
    }

    static let documentPath: String? = Bundle.module.path(forResource: "openapi", ofType: "yaml")

    static func document() -> Response {
        guard let path = documentPath, let data = FileManager.default.contents(atPath: path) else {
            return Problem(.internalServerError, "internal", "openapi.yaml is missing from the build").response
        }
        return Response(status: .ok, headers: [.contentType: "application/yaml"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }
}

// MARK: - Bodies

struct UserBody: Encodable {
    var id: String
    var displayName: String
    var profilePhotoURL: String?

    init(_ user: User) {
        id = user.id
        displayName = user.displayName
        profilePhotoURL = user.profilePhotoURL
    }
}

struct MemberBody: Encodable {
    var userId: String
    var isAdmin: Bool
}

struct PhotoBody: Encodable {
    /// none, pending, uploading, ready, failed, cancelled
    var state: String
    var url: String?
    var error: String?
    var acknowledgedBytes: Int64?
    var totalBytes: Int64?

    init(state: String, url: String?, error: String?, acknowledgedBytes: Int64?, totalBytes: Int64?) {
        self.state = state
        self.url = url
        self.error = error
        self.acknowledgedBytes = acknowledgedBytes
        self.totalBytes = totalBytes
    }

    init(_ group: ChatGroup) {
        let state = group.photoState == .done ? "ready" : group.photoState.rawValue
        self.init(state: state, url: group.photoURL, error: group.photoError, acknowledgedBytes: nil, totalBytes: nil)
    }
}

struct GroupBody: Encodable {
    var id: String
    var name: String
    var createdBy: String
    var createdAt: Date
    var updatedAt: Date
    var members: [MemberBody]
    var photo: PhotoBody

    init(_ group: ChatGroup, members: [GroupMember]) {
        id = group.id
        name = group.name
        createdBy = group.createdBy
        createdAt = group.createdAt
        updatedAt = group.updatedAt
        self.members = members.map { MemberBody(userId: $0.userId, isAdmin: $0.isAdmin) }
        photo = PhotoBody(group)
    }
}

struct AlbumPhotoBody: Encodable {
    var id: String
    var album: String
    var key: String
    var url: String?
    var state: String
    var createdAt: Date

    init(_ photo: AlbumPhoto) {
        id = photo.id
        album = photo.album
        key = photo.key
        url = photo.url
        state = photo.state == .done ? "ready" : photo.state.rawValue
        createdAt = photo.createdAt
    }
}

struct AlbumPage: Encodable {
    var photos: [AlbumPhotoBody]
}

struct UserPage: Encodable {
    var users: [UserBody]
    var nextCursor: String?
}

struct MessageBody: Encodable {
    var id: Int64
    var sender: String
    var text: String
    var isSystem: Bool
    var createdAt: Date

    init(_ message: Message) {
        id = message.id ?? 0
        sender = message.sender
        text = message.text
        isSystem = message.isSystem
        createdAt = message.createdAt
    }
}

struct MessagePage: Encodable {
    var messages: [MessageBody]
    var next: Int64?
}

struct NotificationBody: Encodable {
    var id: Int64
    var groupId: String
    var kind: String
    var deepLink: String
    var createdAt: Date

    init(_ notification: GroupNotification) {
        id = notification.id ?? 0
        groupId = notification.groupId
        kind = notification.kind
        deepLink = notification.deepLink
        createdAt = notification.createdAt
    }
}

struct NotificationPage: Encodable {
    var notifications: [NotificationBody]
    var next: Int64?
}

struct GroupPage: Encodable {
    var groups: [GroupBody]
    var nextCursor: String?
}
