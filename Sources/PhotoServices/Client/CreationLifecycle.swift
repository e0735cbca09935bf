/// What a client does with the server's answer to a group creation — pure, so every answer is
/// table-tested. The id the client chose makes sending again safe: the server answers a repeated
/// creation as it answered the first.
public enum CreationLifecycle {
    public enum Step: Equatable, Sendable {
        /// The server has the group: mark it created and release its photo.
        case created
        /// The server refused it; nothing exists there. Mark it refused, fail its photo.
        case refused(String)
        /// No decision (unreachable, overloaded, the token expired): keep it pending for the next sync.
        case keepPending(String)
    }

    /// `status`: the HTTP status of the answer (nil: no answer); `detail`: the problem's detail or the failure.
    public static func step(status: Int?, detail: String) -> Step {
        guard let status else { return .keepPending(detail) }
        switch status {
        case 200, 201: return .created
        // 401: the token expired or is not yet valid — a fresh one fixes it; 408/425/429: try later.
        case 401, 408, 425, 429: return .keepPending(detail)
        case 400..<500: return .refused(detail)
        default: return .keepPending(detail)  // 5xx (the server's database is busy, a gateway has no backend …), 3xx
        }
    }
}
