import HTTPTypes
import Logging
import PhotoServices

/// A failure of what the server stands on — its database or its storage — answered alike by every route: 503
/// (unavailable, locked, not answering) or 507 (full) with `Retry-After`, a message that names no file, host or
/// table, the detail in an error-level log line, and a count in `photoprep_dependency_failures_total{condition}`.
/// Never a 500: the request was fine, and asking again later may succeed.
struct DependencyFailure: Error, CustomStringConvertible {
    enum Condition: String {
        case unavailable, full
    }

    var condition: Condition
    /// What failed, with paths and the system's words: for the operator's log only.
    var detail: String

    /// The failure a service error stands for, if it is one (`storage`, `storageFull`).
    init?(_ error: ServiceError) {
        switch error {
        case .storage(let detail): self.init(.unavailable, detail: detail)
        case .storageFull(let detail): self.init(.full, detail: detail)
        default: return nil
        }
    }

    /// The failure an upload store's error stands for (full, or else unavailable).
    init(_ failure: UploadStoreFailure) {
        self.init(failure.kind == .full ? .full : .unavailable, detail: failure.description)
    }

    init(_ condition: Condition, detail: String) {
        self.condition = condition
        self.detail = detail
    }

    var status: HTTPResponse.Status { condition == .full ? Self.insufficientStorage : .serviceUnavailable }

    /// 507 (RFC 4918 §11.5): the server cannot store what the request needs stored.
    static let insufficientStorage = HTTPResponse.Status(code: 507, reasonPhrase: "Insufficient Storage")

    /// What the client is told.
    var description: String {
        switch condition {
        case .unavailable: "the server's storage or database is unavailable; try again after Retry-After seconds (acknowledged bytes are kept)"
        case .full: "the server's storage is full; try again after Retry-After seconds (acknowledged bytes are kept)"
        }
    }

    /// Logs the detail at error level and counts the failure.
    func report(_ logger: Logger, _ metrics: ServerMetrics) {
        logger.error("\(condition == .full ? "storage full" : "storage or database unavailable")", metadata: ["detail": "\(detail)"])
        metrics.dependencyFailure(condition.rawValue)
    }
}
