import HTTPTypes
import Hummingbird
import NIOCore
import Synchronization

/// Whether a connection ends after its answer instead of reading what is left of the request's body.
///
/// Hummingbird reads (and drops) whatever body a handler left unread before the connection's next request —
/// a refused `PATCH` declaring 1 GB would be read to its end. A refusal of a request whose body was not read
/// (any 4xx or 5xx while more body was declared than was read, or a chunked one) answers with
/// `Connection: close` and ends the connection: no more of it is read (`closeIfAsked`). Up to 64 KiB left
/// unread (an API call's small JSON body) is still read, and the connection kept.
final class ConnectionEnd: Sendable {
    private let asked = Atomic<Bool>(false)

    @TaskLocal static var current: ConnectionEnd?

    /// Marks `response` as the connection's last when it refuses `request` with part of its body unread
    /// (`read`: the body bytes the upload handler consumed).
    static func settle(_ response: inout Response, for request: Request, read: Int64) {
        guard response.status.code >= 400, let current else { return }
        let declared = request.headers[.contentLength].flatMap { Int64($0) }
        let chunked = request.headers[.transferEncoding] != nil
        guard chunked || (declared ?? 0) > read + 64 * 1024 else { return }
        response.headers[.connection] = "close"
        current.asked.store(true, ordering: .relaxed)
    }

    /// Stops reading from `channel` if this request's answer was its last: the unread body is not read.
    func closeIfAsked(_ channel: any Channel) {
        guard asked.load(ordering: .relaxed) else { return }
        channel.close(mode: .input, promise: nil)
    }
}
