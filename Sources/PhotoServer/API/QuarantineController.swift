import Foundation
import Hummingbird
import PhotoServices

/// `/v1/quarantine…`: the photos the app's review quarantined (`--review-url`), for the server's admins: list them, each
/// with a download URL to look at it, and release one — its links go to everyone who may see it from then on. Anyone
/// else gets 403.
struct QuarantineController: Sendable {
    let photos: StoredPhotos
    let admins: Admins
    let address: PublicAddress

    func addRoutes(to v1: RouterGroup<ServerContext>) {
        v1.get("quarantine", use: list)
        v1.post("quarantine/release", use: release)
    }

    @Sendable func list(_ request: Request, context: ServerContext) async throws -> QuarantinePage {
        _ = try admins.require(context, "see the quarantined photos")
        let base = address.base(request.head)
        return QuarantinePage(photos: try await photos.quarantined(limit: try Paging.limit(request)).map { QuarantinedPhotoBody($0, base: base) })
    }

    /// Releases the photo at the body's `key`: the photo, released.
    @Sendable func release(_ request: Request, context: ServerContext) async throws -> QuarantinedPhotoBody {
        let admin = try admins.require(context, "release quarantined photos")
        let body = try await request.decode(as: ReleasePhoto.self, context: context)
        return QuarantinedPhotoBody(try await photos.release(body.key, by: admin.id), base: address.base(request.head))
    }
}
