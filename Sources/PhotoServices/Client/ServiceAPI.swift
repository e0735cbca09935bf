import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import PhotoUpload

/// The calls a client makes to `photoprep serve`'s API (`/v1/…`, JSON, problem details), with the
/// signed-in user's bearer token. One attempt each: whether and when to try again is the caller's
/// decision (`CreationLifecycle`).
struct ServiceAPI: Sendable {
    let server: URL
    let token: @Sendable () -> String?
    let timeout: Duration

    /// What came back: an answer (any status), or none.
    enum Answer: Sendable {
        case answered(status: Int, body: [UInt8])
        case unreachable(String)

        /// The problem's `detail` (RFC 9457), or the status line.
        var detail: String {
            switch self {
            case .unreachable(let reason): return reason
            case .answered(let status, let body):
                let problem = try? JSONDecoder().decode(ProblemBody.self, from: Data(body))
                return problem?.detail ?? "\(status) \(HTTPResponseStatus(statusCode: status).reasonPhrase)"
            }
        }
    }

    struct ProblemBody: Decodable {
        var type: String?
        var detail: String?
    }

    func call(_ method: HTTPMethod, _ path: String, json body: (some Encodable)? = Optional<String>.none) async -> Answer {
        let url = server.appendingPathComponent(path).absoluteString
        var request = HTTPClientRequest(url: url)
        request.method = method
        request.headers.add(name: "Accept", value: "application/json, application/problem+json")
        if let token = token() { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            guard let data = try? JSONEncoder().encode(body) else { return .unreachable("cannot encode the request") }
            request.body = .bytes(ByteBuffer(bytes: data))
        }
        do {
            let response = try await HTTPClient.uploads.execute(request, timeout: timeAmount(timeout))
            let bytes = try await response.body.collect(upTo: 1 << 20)
            return .answered(status: Int(response.status.code), body: Array(buffer: bytes))
        } catch {
            return .unreachable("\(method.rawValue) \(url): \(networkFailure(error))")
        }
    }

    /// The request body of `POST /v1/groups`.
    struct CreateGroup: Encodable {
        var id: String
        var name: String
        var participants: [String]
    }

    /// What the client reads of a group (`GroupBody` on the server).
    struct Group: Decodable {
        struct Member: Decodable {
            var userId: String
            var isAdmin: Bool
        }

        var id: String
        var name: String
        var members: [Member]
    }

    /// A photo's state (`PhotoBody` on the server).
    struct Photo: Decodable {
        var state: String
        var url: String?
    }

    /// The stored photo's URL, once the server says it is ready (nil: not (yet), or no answer).
    /// The photo at `path` (`/v1/groups/{id}/photo`, `/v1/me/photo`) with its download links.
    func photoLinks(_ path: String) async throws(ServiceError) -> PhotoLinks {
        let answer = await call(.GET, path)
        switch answer {
        case .answered(200, let body):
            guard let links = try? JSONDecoder().decode(PhotoLinks.self, from: Data(body)) else {
                throw .rejected("GET \(path): not the photo object the API describes")
            }
            return links
        case .answered(404, _):
            throw .notFound("\(path): \(answer.detail)")
        case .answered:
            throw .rejected("GET \(path): \(answer.detail)")
        case .unreachable(let reason):
            throw .rejected("the server cannot be reached: \(reason)")
        }
    }

    func readyPhotoURL(_ path: String) async -> String? {
        guard case .answered(200, let body) = await call(.GET, path),
            let photo = try? JSONDecoder().decode(Photo.self, from: Data(body)), photo.state == "ready"
        else { return nil }
        return photo.url
    }
}

/// The user id (`sub`) of a JWT, read without verifying it: the client only names its own folders
/// with it; the server verifies the token.
func subject(ofJWT token: String) -> String? {
    let parts = token.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count == 3 else { return nil }
    guard let data = Data(base64URL: String(parts[1])),
        let claims = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
    else { return nil }
    return claims["sub"] as? String
}
