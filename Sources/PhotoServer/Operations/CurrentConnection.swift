import HTTPTypes
import Hummingbird
import NIOCore
import NIOHTTPTypes
import PhotoServices
import Synchronization

/// The connection a request came on, for what a handler's `Response` cannot say:
///
/// - **an interim answer** (`sendInterim`): an IETF-draft upload creation's 104 with the upload's URL,
///   sent once the creation was accepted and before its body is read;
/// - **ending the connection after the answer** (`settle`): Hummingbird reads (and drops) whatever body a
///   handler left unread before the connection's next request — a refused `PATCH` declaring 1 GB would be
///   read to its end. A refusal (any 4xx or 5xx) of a request with more than 64 KiB of its declared body
///   unread, or a chunked one, answers with `Connection: close`, and no more of the connection is read
///   (`closeIfAsked`). A small unread body (an API call's JSON) is still read, and the connection kept — and so is
///   the rest of an upload's body that the storage had no room for (507), up to the largest upload: that client is
///   sending at full speed, and a connection closed under its body is reset, which can lose the 507 and its
///   `Retry-After` before the client reads them.
final class CurrentConnection: Sendable {
    let channel: any Channel
    private let closing = Atomic<Bool>(false)

    @TaskLocal static var current: CurrentConnection?

    init(_ channel: any Channel) { self.channel = channel }

    /// Sends an interim (1xx) answer on the current request's connection, ahead of its final one.
    static func sendInterim(_ head: HTTPResponse) async throws {
        guard let current else { return }
        try await current.channel.writeAndFlush(HTTPResponsePart.head(head))
    }

    /// Marks `response` as the connection's last when it refuses `request` with much of its body unread
    /// (`read`: the body bytes the upload handler consumed).
    static func settle(_ response: inout Response, for request: Request, read: Int64) {
        guard response.status.code >= 400, let current else { return }
        let declared = request.headers[.contentLength].flatMap { Int64($0) }
        let chunked = request.headers[.transferEncoding] != nil
        guard chunked || (declared ?? 0) > read + 64 * 1024 else { return }
        if response.status == DependencyFailure.insufficientStorage, let declared, declared - read <= StoragePath.largestSizeLimit { return }
        response.headers[.connection] = "close"
        current.closing.store(true, ordering: .relaxed)
    }

    /// Stops reading the connection if the request's answer was its last: the unread body is not read.
    func closeIfAsked() {
        guard closing.load(ordering: .relaxed) else { return }
        channel.close(mode: .input, promise: nil)
    }
}
