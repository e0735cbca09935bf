import Synchronization

/// Filled in while a request is handled: who it was (once the token verified) and the body bytes received.
final class RequestLogEntry: Sendable {
    private let state = Mutex<(user: String?, bytes: Int64)>((nil, 0))

    func authenticated(_ user: String) { state.withLock { $0.user = user } }
    func received(_ count: Int) { state.withLock { $0.bytes += Int64(count) } }
    var user: String? { state.withLock { $0.user } }
    var bytes: Int64 { state.withLock { $0.bytes } }
}
