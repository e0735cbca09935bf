import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import PhotoServices

/// An error answer as RFC 9457 problem details (`application/problem+json`): a stable `type` per rule,
/// the HTTP status, a human `detail`, and for a rule violation the request `field` at fault. Thrown by
/// the API's handlers; Hummingbird answers it with `response`.
struct Problem: HTTPResponseError, Encodable {
    var type: String
    var title: String
    var code: Int
    var detail: String
    var field: String?

    enum CodingKeys: String, CodingKey {
        case type, title, code = "status", detail, field
    }

    var status: HTTPResponse.Status { HTTPResponse.Status(code: code) }

    static let base = "https://photoprep.dev/problems/"

    init(_ status: HTTPResponse.Status, _ rule: String, _ detail: String, field: String? = nil) {
        type = Self.base + rule
        title = status.reasonPhrase
        code = status.code
        self.detail = detail
        self.field = field
    }

    /// A service error as the API reports it: rule violations 422 naming the field, refusals 403,
    /// missing things 404.
    init(_ error: ServiceError) {
        switch error {
        case .groupNameEmpty, .groupNameTooLong, .groupNameInvalid: self.init(.unprocessableContent, "group-name", error.description, field: "name")
        case .tooFewParticipants: self.init(.unprocessableContent, "too-few-participants", error.description, field: "participants")
        case .tooManyMembers: self.init(.unprocessableContent, "too-many-members", error.description, field: "participants")
        case .unknownUsers: self.init(.unprocessableContent, "unknown-users", error.description, field: "participants")
        case .invalidIdentifier: self.init(.unprocessableContent, "invalid-identifier", error.description)
        case .invalidName: self.init(.unprocessableContent, "invalid-name", error.description, field: "displayName")
        case .notAllowed: self.init(.forbidden, "not-allowed", error.description)
        case .notFound: self.init(.notFound, "not-found", error.description)
        case .unsupportedPhoto, .photoTooLarge: self.init(.unprocessableContent, "photo", error.description)
        case .invalidState: self.init(.conflict, "invalid-state", error.description)
        case .overQuota: self.init(.contentTooLarge, "over-quota", error.description)
        case .storage, .storageFull:
            let failure = DependencyFailure(error)!
            self.init(failure)
        case .rejected: self.init(.badGateway, "rejected", error.description)
        case .rejectedByReview: self.init(.unprocessableContent, "rejected-by-review", error.description)
        }
    }

    /// A failure of the database or the storage: 503 or 507, a message without its detail.
    init(_ failure: DependencyFailure) {
        self.init(failure.status, failure.condition == .full ? "storage-full" : "storage", failure.description)
    }

    func response(from request: Request, context: some RequestContext) throws -> Response { response }

    /// When a client should try again after `status`: every 429, 503 and 507 says (RFC 9110 §10.2.3).
    static func retryAfter(_ status: HTTPResponse.Status) -> Int? {
        switch status {
        case .tooManyRequests, DependencyFailure.insufficientStorage: 60
        case .serviceUnavailable: 5
        default: nil
        }
    }

    var response: Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let body = (try? encoder.encode(self)) ?? Data()
        var headers: HTTPFields = [.contentType: "application/problem+json"]
        if code == 401 { headers[.wwwAuthenticate] = "Bearer" }
        if let seconds = Self.retryAfter(status) { headers[.retryAfter] = String(seconds) }
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }
}
