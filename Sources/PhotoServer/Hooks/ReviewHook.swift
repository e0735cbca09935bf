import Foundation
import PhotoPrep
import PhotoServices

/// The app's backend asked about each prepared photo before it is stored (its moderation; tusd's `pre-finish`, with
/// the photo as it would be stored): the server POSTs the photo — its bytes in base64, its size and dimensions, its
/// thumbnails' sizes, the uploader — as JSON to `--review-url`, and the backend answers `{"verdict": "accept"}`,
/// `{"verdict": "reject", "reason": "…"}` (nothing stored; the client gets 422 with the reason) or
/// `{"verdict": "quarantine", "reason": "…"}` (stored, its links only for the uploader and the admins until an admin
/// releases it). A hook that cannot be asked — down, slower than `--review-timeout`, another status than 2xx, an
/// answer that is not that JSON — has failed, and `--review-failure` says what that means: `refuse` (503, the bytes
/// kept for the client to ask again), `allow` (stored as if accepted) or `quarantine`.
public struct ReviewHook: Sendable {
    /// What a failed hook means.
    public enum Failure: String, Sendable, CaseIterable {
        case refuse, allow, quarantine
    }

    public let url: String
    public let timeout: Duration
    public let onFailure: Failure

    public init(url: String, timeout: Duration = .seconds(10), onFailure: Failure = .refuse) {
        self.url = url
        self.timeout = timeout
        self.onFailure = onFailure
    }

    /// What is asked: `{"type": "photo.review", "caller": {"id", "name"}, "photo": {"key", "contentType", "size",
    /// "width", "height", "sha256", "score", "bytes"}, "thumbnails": [{"edge", "width", "height", "size"}]}`.
    struct Question: Encodable {
        struct Asker: Encodable {
            var id: String
            var name: String?
        }
        struct Photo: Encodable {
            var key: String
            var contentType = "image/jpeg"
            var size: Int
            var width: Int
            var height: Int
            var sha256: String
            var score: Double?
            var bytes: String
        }
        struct Thumbnail: Encodable {
            var edge: Int
            var width: Int
            var height: Int
            var size: Int
        }
        var type = "photo.review"
        var caller: Asker
        var photo: Photo
        var thumbnails: [Thumbnail]
    }

    /// The hook's answer, or why there is none.
    enum Answer: Equatable {
        case verdict(ReviewVerdict)
        case failed(String)
    }

    /// Asks the hook about `photo`; bounded by `timeout` whatever the hook does.
    func ask(_ photo: PreparedPhoto, key: String, caller: String, displayName: String?) async -> Answer {
        let question = Question(
            caller: .init(id: caller, name: displayName),
            photo: .init(
                key: key, size: photo.jpeg.count, width: photo.report.outputWidth, height: photo.report.outputHeight,
                sha256: StoredPhotos.Content(of: photo.jpeg).sha256, score: photo.report.score, bytes: Data(photo.jpeg).base64EncodedString()),
            thumbnails: photo.thumbnails.map { .init(edge: $0.edge, width: $0.width, height: $0.height, size: $0.jpeg.count) })
        let body: Data
        do { body = try JSONEncoder().encode(question) } catch { return .failed("the question cannot be written: \(error)") }
        switch await BoundedPost.send(to: url, body: body, timeout: timeout) {
        case .answered(let status, let answer): return Self.answer(status: status, body: answer)
        case .failed(let why): return .failed(why)
        }
    }

    /// What an answer means.
    static func answer(status: Int, body: Data) -> Answer {
        guard (200..<300).contains(status) else { return .failed("answered \(status)") }
        struct Said: Decodable {
            var verdict: String
            var reason: String?
        }
        guard let said = try? JSONDecoder().decode(Said.self, from: body) else {
            return .failed("answered \(status) without {\"verdict\": …}: \(String(decoding: body.prefix(200), as: UTF8.self))")
        }
        let reason = String((said.reason ?? "").filter { !$0.isNewline }.prefix(1000))
        switch said.verdict {
        case "accept": return .verdict(.accept)
        case "reject": return .verdict(.reject(reason: reason.isEmpty ? "refused by the app's review" : reason))
        case "quarantine": return .verdict(.quarantine(reason: reason.isEmpty ? "held for review" : reason))
        default: return .failed("answered the verdict \"\(said.verdict.prefix(50))\", not accept, reject or quarantine")
        }
    }
}
