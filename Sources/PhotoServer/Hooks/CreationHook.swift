import Foundation
import PhotoServices

/// The app's backend asked before an upload is created (tusd's `pre-create`): the server POSTs what the upload would
/// be — the caller, the key, the declared length, the client's metadata — as JSON to `--hook-url`, and the backend
/// answers `{"accept": true}`, or `{"accept": false, "status": 4xx, "message": "…"}`: a refusal the client gets as it
/// is (another status than 400–499 is 403). A hook that cannot be asked — down, slower than `--hook-timeout`, another
/// status than 2xx, an answer that is not that JSON — has failed, and `--hook-failure` says what that means: `refuse`
/// (the default: 503 with `Retry-After`, nothing created) or `allow` (created as if accepted). Either way the server
/// logs why (`UploadHandler`).
public struct CreationHook: Sendable {
    /// What a failed hook means.
    public enum Failure: String, Sendable, CaseIterable {
        case refuse, allow
    }

    /// The hook's answer.
    enum Verdict: Equatable, Sendable {
        case accept
        case refuse(status: Int, message: String)
        /// Not asked, or no answer that says: why.
        case failed(String)
    }

    public let url: String
    public let timeout: Duration
    public let onFailure: Failure

    public init(url: String, timeout: Duration = .seconds(5), onFailure: Failure = .refuse) {
        self.url = url
        self.timeout = timeout
        self.onFailure = onFailure
    }

    /// What is asked: `{"type": "upload.create", "caller": {"id", "name"}, "upload": {"key", "length", "metadata"}}`.
    struct Question: Encodable {
        struct Asker: Encodable {
            var id: String
            var name: String?
        }
        struct Upload: Encodable {
            var key: String
            var length: Int64
            var metadata: [String: String]
        }
        var type = "upload.create"
        var caller: Asker
        var upload: Upload
    }

    /// Asks the hook whether `caller` may create the upload; bounded by `timeout` whatever the hook does.
    func ask(caller: Caller, key: String, length: Int64, metadata: [String: String]) async -> Verdict {
        let question = Question(caller: .init(id: caller.id, name: caller.displayName), upload: .init(key: key, length: length, metadata: metadata))
        let body: Data
        do { body = try JSONEncoder().encode(question) } catch { return .failed("the question cannot be written: \(error)") }
        switch await BoundedPost.send(to: url, body: body, timeout: timeout) {
        case .answered(let status, let answer): return Self.verdict(status: status, body: answer)
        case .failed(let why): return .failed(why)
        }
    }

    /// What an answer means.
    static func verdict(status: Int, body: Data) -> Verdict {
        guard (200..<300).contains(status) else { return .failed("answered \(status)") }
        struct Answer: Decodable {
            var accept: Bool
            var status: Int?
            var message: String?
        }
        guard let answer = try? JSONDecoder().decode(Answer.self, from: body) else {
            return .failed("answered \(status) without {\"accept\": true|false}: \(String(decoding: body.prefix(200), as: UTF8.self))")
        }
        guard !answer.accept else { return .accept }
        let message = String((answer.message ?? "the upload was refused").filter { !$0.isNewline }.prefix(1000))
        return .refuse(status: answer.status.flatMap { (400..<500).contains($0) ? $0 : nil } ?? 403, message: message)
    }
}
