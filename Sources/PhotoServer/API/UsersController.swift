import Foundation
import Hummingbird
import PhotoServices

/// `/v1/me…` and `/v1/users…` over the user directory and the profile service: the caller's profile and
/// its picture, and finding other users (the participant picker).
struct UsersController: Sendable {
    let users: UserDirectory
    let profiles: ProfileService
    let photos: StoredPhotos
    let intake: PhotoIntake
    /// Users' storage quotas (reading usage when quotas are off).
    let quotas: Quotas
    let uploads: UploadsInProgress
    let links: DownloadLinks

    func addRoutes(to v1: RouterGroup<ServerContext>) {
        v1.get("me", use: me)
        v1.patch("me", use: updateMe)
        v1.get("me/photo", use: photo)
        v1.delete("me/photo", use: deletePhoto)
        v1.post("me/photo/token", use: regenerateToken)
        v1.put("me/photo/focus", use: setFocus)
        v1.get("me/usage", use: usage)
        v1.get("users", use: search)
        v1.get("users/:id", use: user)
    }

    @Sendable func me(_ request: Request, context: ServerContext) async throws -> UserBody {
        try await links.user(try await known(context.caller()), for: try context.caller().id, request)
    }

    @Sendable func updateMe(_ request: Request, context: ServerContext) async throws -> UserBody {
        let caller = try context.caller()
        let body = try await request.decode(as: UpdateMe.self, context: context)
        _ = try await known(caller)
        return try await links.user(try await users.rename(caller.id, to: body.displayName), for: try context.caller().id, request)
    }

    /// The caller's profile picture: none, uploading (with the bytes the server acknowledged) or ready.
    @Sendable func photo(_ request: Request, context: ServerContext) async throws -> PhotoBody {
        let caller = try context.caller()
        let user = try await known(caller)
        let prefix = "profile_images/\(caller.id)/"
        let body =
            try await uploads.photo(where: { $0.owner == caller.id && $0.key.hasPrefix(prefix) })
            ?? PhotoBody(state: user.profilePhotoKey == nil ? "none" : "ready", error: nil, acknowledgedBytes: nil, totalBytes: nil)
        guard let key = user.profilePhotoKey else { return body }
        return try await links.photo(body, key: key, for: try context.caller().id, request)
    }

    /// A new download URL for the caller's profile picture; the previous one stops working.
    @Sendable func regenerateToken(_ request: Request, context: ServerContext) async throws -> PhotoBody {
        let caller = try context.caller()
        let user = try await known(caller)
        // As for a group's photo: asked before there is one, 409 (the README's rule), not 404 (the route exists).
        guard let key = user.profilePhotoKey else { throw ServiceError.invalidState("there is no profile picture for \(caller.id) yet") }
        _ = try await photos.regenerateToken(caller: caller.id, try StoragePath(key: key))
        return try await links.photo(PhotoBody(state: "ready", error: nil, acknowledgedBytes: nil, totalBytes: nil), key: key, for: try context.caller().id, request)
    }

    /// Centres the caller's picture's square thumbnails on a focal point (null: the attention rule's choice); they are
    /// made again, and the picture gets new download URLs.
    @Sendable func setFocus(_ request: Request, context: ServerContext) async throws -> PhotoBody {
        let caller = try context.caller()
        let focus = try await request.decode(as: SetFocus.self, context: context).point()
        let user = try await known(caller)
        guard let key = user.profilePhotoKey else { throw ServiceError.invalidState("there is no profile picture for \(caller.id) yet") }
        _ = try await intake.refocus(try StoragePath(key: key), focus: focus, caller: caller.id)
        return try await links.photo(PhotoBody(state: "ready", error: nil, acknowledgedBytes: nil, totalBytes: nil), key: key, for: try context.caller().id, request)
    }

    @Sendable func deletePhoto(_ request: Request, context: ServerContext) async throws -> HTTPResponse.Status {
        let caller = try context.caller()
        _ = try await known(caller)
        try await profiles.deleteProfilePhoto(caller: caller.id)
        return .noContent
    }

    /// What the caller keeps stored in their own folders (profile pictures, album photos, with their thumbnails) and
    /// their quota: their own, else the server's.
    @Sendable func usage(_ request: Request, context: ServerContext) async throws -> UsageBody {
        let caller = try context.caller()
        _ = try await known(caller)
        let account = try await quotas.account(of: caller.id)
        return UsageBody(bytes: account.usage.bytes, photos: account.usage.photos, quota: account.quota)
    }

    /// Users by display-name prefix (a participant picker), never the caller, by name then id.
    @Sendable func search(_ request: Request, context: ServerContext) async throws -> UserPage {
        let caller = try context.caller()
        let query = request.uri.queryParameters
        let limit = try Paging.limit(request)
        var after: User?
        if let cursor = query.get("cursor"), !cursor.isEmpty {
            guard let user = try await users.user(cursor) else { throw Problem(.badRequest, "cursor", "not a cursor this server gave", field: "cursor") }
            after = user
        }
        let found = try await users.search(prefix: query.get("prefix") ?? "", excluding: caller.id, limit: limit, after: after)
        return UserPage(users: try await links.users(found, for: try context.caller().id, request), nextCursor: found.count == limit ? found.last?.id : nil)
    }

    @Sendable func user(_ request: Request, context: ServerContext) async throws -> UserBody {
        _ = try context.caller()
        guard let user = try await users.user(context.parameter("id")) else { throw Problem(.notFound, "not-found", "no such user") }
        return try await links.user(user, for: try context.caller().id, request)
    }

    /// The caller as a user of the services; 404 before their first photo or group made them one.
    private func known(_ caller: Caller) async throws -> User {
        guard let user = try await users.user(caller.id) else {
            throw Problem(.notFound, "unknown-user", "\(caller.id) is not a user of this service yet")
        }
        return user
    }
}
