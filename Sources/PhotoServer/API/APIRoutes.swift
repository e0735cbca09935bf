import Foundation
import Hummingbird
import NIOCore
import PhotoServices

/// The services over HTTP at `/v1/` (described by `openapi.yaml`, served at `/openapi.yaml`): one
/// controller per kind of resource over the service it uses — `UsersController` (the caller's profile and
/// picture, the participant picker), `GroupsController` (groups, members, messages, notifications) and
/// `AlbumsController`. The same bearer JWT as the uploads (`BearerAuthentication`); JSON bodies
/// (`APIRequestDecoder`, `APIResponseEncoder`); errors as RFC 9457 problem details (`ProblemMiddleware`).
struct APIRoutes: Sendable {
    let services: PhotoServices
    let photos: StoredPhotos
    let store: any PartialUploadStore
    let address: PublicAddress
    let metrics: ServerMetrics
    /// Who may see the events and the quarantined photos (`Admins`).
    let admins: Set<String>

    func register(on router: some RouterMethods<ServerContext>) {
        router.get("/openapi.yaml") { _, _ in Self.document() }
        let v1 = router.group("v1").add(middleware: ProblemMiddleware(metrics: metrics))
        let uploads = UploadsInProgress(store: store)
        let links = DownloadLinks(photos: photos, address: address, admins: admins)
        UsersController(
            users: services.users, profiles: services.profiles, photos: photos, intake: services.intake,
            quotas: services.intake.quotas ?? Quotas(database: services.database, standard: nil), uploads: uploads, links: links)
            .addRoutes(to: v1)
        AlbumsController(users: services.users, profiles: services.profiles, links: links).addRoutes(to: v1)
        GroupsController(groups: services.groups, photos: photos, intake: services.intake, uploads: uploads, links: links).addRoutes(to: v1)
        EventsController(outbox: Outbox(database: services.database), admins: Admins(ids: admins)).addRoutes(to: v1)
        QuarantineController(moderation: services.moderation, admins: Admins(ids: admins), address: address).addRoutes(to: v1)
    }

    static let documentPath: String? = Bundle.module.path(forResource: "openapi", ofType: "yaml")

    static func document() -> Response {
        guard let path = documentPath, let data = FileManager.default.contents(atPath: path) else {
            return Problem(.internalServerError, "internal", "openapi.yaml is missing from the build").response
        }
        return Response(status: .ok, headers: [.contentType: "application/yaml"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }
}
