import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import PhotoFiles
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

    /// The photo at `path` (`/v1/groups/{id}/photo`, `/v1/me/photo`) with its download links.
    func photoLinks(_ path: String) async throws(ServiceError) -> PhotoLinks {
        try await expect(200, .GET, path) { body in try JSONDecoder().decode(PhotoLinks.self, from: Data(body)) }
    }

    /// Centres the square thumbnails of the photo at `path` (`…/photo`) on `focus` (nil: the attention rule's choice).
    func setFocus(_ path: String, _ focus: String?) async throws(ServiceError) -> PhotoLinks {
        struct Body: Encodable {
            var focus: String?
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(focus, forKey: .focus)  // null, not absent, for "none"
            }
            enum CodingKeys: String, CodingKey { case focus }
        }
        return try await expect(200, .PUT, path + "/focus", json: Body(focus: focus)) { body in try JSONDecoder().decode(PhotoLinks.self, from: Data(body)) }
    }

    /// The signed-in user's photos in `album`.
    func albumPhotos(_ album: String) async throws(ServiceError) -> [AlbumPhotoLinks] {
        struct Page: Decodable { var photos: [AlbumPhotoLinks] }
        let path = "v1/albums/\(album)/photos"
        return try await expect(200, .GET, path) { body in try JSONDecoder().decode(Page.self, from: Data(body)).photos }
    }

    func deleteProfilePhoto() async throws(ServiceError) {
        try await expect(204, .DELETE, "v1/me/photo") { _ in }
    }

    func deleteAlbumPhoto(album: String, photoId: String) async throws(ServiceError) {
        try await expect(204, .DELETE, "v1/albums/\(album)/photos/\(photoId)") { _ in }
    }

    /// The URL of the album photo stored at `key`, once the server lists it as ready.
    func readyAlbumPhotoURL(album: String, key: String) async -> String? {
        let photos = try? await albumPhotos(album)
        return photos?.first { $0.key == key && $0.state == "ready" }?.url
    }

    /// One call whose answer should be `status`: its body read by `read`; 404 is `notFound`, any other
    /// answer `rejected` with the problem's detail, no answer `rejected` as unreachable.
    private func expect<T>(
        _ status: Int, _ method: HTTPMethod, _ path: String, json: (some Encodable)? = Optional<String>.none, read: ([UInt8]) throws -> T
    ) async throws(ServiceError) -> T {
        let answer = await call(method, path, json: json)
        switch answer {
        case .answered(let got, let body) where got == status:
            do {
                return try read(body)
            } catch {
                throw .rejected("\(method.rawValue) \(path): not what the API describes")
            }
        case .answered(404, _):
            throw .notFound("\(path): \(answer.detail)")
        case .answered:
            throw .rejected("\(method.rawValue) \(path): \(answer.detail)")
        case .unreachable(let reason):
            throw .rejected("the server cannot be reached: \(reason)")
        }
    }

    /// The stored photo's URL, once the server says it is ready (nil: not (yet), or no answer).
    func readyPhotoURL(_ path: String) async -> String? {
        guard let photo = try? await photoLinks(path), photo.state == "ready" else { return nil }
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
