import Foundation
import Hummingbird
import PhotoServices

/// `/v1/quarantine…`: the photos the app's review quarantined (`--review-url`), for the server's admins: list them, each
/// with a download URL to look at it; release one — its links go to everyone who may see it from then on — or reject
/// it after all: deleted as its owner would delete it. Anyone else gets 403.
struct QuarantineController: Sendable {
    let moderation: Moderation
    let admins: Admins
    let address: PublicAddress

    func addRoutes(to v1: RouterGroup<ServerContext>) {
        v1.get("quarantine", use: list)
        v1.post("quarantine/release", use: release)
        v1.post("quarantine/reject", use: reject)
    }

    @Sendable func list(_ request: Request, context: ServerContext) async throws -> QuarantinePage {
        _ = try admins.require(context, "see the quarantined photos")
        let base = address.base(request.head)
        return QuarantinePage(photos: try await moderation.quarantined(limit: try Paging.limit(request)).map { QuarantinedPhotoBody($0, base: base) })
    }

    /// Releases the photo at the body's `key`: the photo, released.
    @Sendable func release(_ request: Request, context: ServerContext) async throws -> QuarantinedPhotoBody {
        let admin = try admins.require(context, "release quarantined photos")
        let body = try await request.decode(as: QuarantineDecision.self, context: context)
        return QuarantinedPhotoBody(try await moderation.release(body.key, by: admin.id), base: address.base(request.head))
    }

    /// Deletes the photo at the body's `key` (with the body's `reason`, if any): the photo as it was.
    @Sendable func reject(_ request: Request, context: ServerContext) async throws -> QuarantinedPhotoBody {
        let admin = try admins.require(context, "reject quarantined photos")
        let body = try await request.decode(as: QuarantineDecision.self, context: context)
        let rejected = try await moderation.reject(body.key, by: admin.id, reason: body.reason ?? "rejected by an admin")
        return QuarantinedPhotoBody(rejected, base: address.base(request.head))
    }
}
