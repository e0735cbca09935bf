import Foundation
import Hummingbird
import PhotoServices

/// `/v1/albums/{album}/photos…` over the profile service: the caller's album photos.
struct AlbumsController: Sendable {
    let users: UserDirectory
    let profiles: ProfileService
    let links: DownloadLinks

    func addRoutes(to v1: RouterGroup<ServerContext>) {
        v1.get("albums/:album/photos", use: photos)
        v1.delete("albums/:album/photos/:photo", use: delete)
    }

    @Sendable func photos(_ request: Request, context: ServerContext) async throws -> AlbumPage {
        let caller = try context.caller()
        // A name no album can have is a rule violation (422, as the OpenAPI document says), not an empty album.
        let album = try Self.album(context)
        guard try await users.user(caller.id) != nil else { return AlbumPage(photos: []) }
        return AlbumPage(photos: try await links.album(try await profiles.albumPhotos(caller: caller.id, album: album), for: try context.caller().id, request))
    }

    /// The path's album name, percent-decoded (`%7C` is `|`), as a storage path allows it (422 otherwise).
    static func album(_ context: ServerContext) throws(ServiceError) -> String {
        let raw = context.parameter("album")
        return try StorageRules.validated(raw.removingPercentEncoding ?? raw, "album")
    }

    /// Deletes one of the caller's album photos (404 for anyone else's, or one in another album).
    @Sendable func delete(_ request: Request, context: ServerContext) async throws -> HTTPResponse.Status {
        let caller = try context.caller()
        let photo = context.parameter("photo")
        guard try await users.user(caller.id) != nil,
            try await profiles.albumPhotos(caller: caller.id, album: try Self.album(context)).contains(where: { $0.id == photo })
        else { throw Problem(.notFound, "not-found", "no such photo") }
        try await profiles.deleteAlbumPhoto(caller: caller.id, photoId: photo)
        return .noContent
    }
}
