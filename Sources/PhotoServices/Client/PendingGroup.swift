public import Foundation
public import GRDB

/// A group a client created, kept until the server has it: sent again (with the same id, so the
/// server creates it once) until the server answers.
public struct PendingGroup: Codable, Sendable, Equatable, FetchableRecord, PersistableRecord {
    public enum State: String, Codable, Sendable, DatabaseValueConvertible {
        /// Not yet answered by the server.
        case pending
        /// The server has it (its photo, if any, is released to upload).
        case created
        /// The server refused it (e.g. an unknown participant): nothing was created; `error` says why.
        case refused
    }

    /// The group's id, chosen by the client.
    public var id: String
    public var name: String
    /// The other participants, as sent (JSON in the database).
    public var participants: [String]
    /// The photo job waiting for the group (`PhotoJob.waitsFor`).
    public var photoJob: String?
    public var state: State
    /// Why it is still pending (the last attempt's failure), or why it was refused.
    public var error: String?
    /// Creation requests sent so far.
    public var attempts: Int
    public var createdAt: Date
    public var updatedAt: Date
}

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
