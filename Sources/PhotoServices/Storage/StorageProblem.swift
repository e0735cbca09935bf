/// Why the storage would not take a photo now (`PhotoStorage.probe`): its kind, which a readiness probe
/// answers with, and the detail (paths, the bucket's words), which belongs in the operator's log only.
public struct StorageProblem: Error, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// Not reachable, not writable, not answering in time.
        case unavailable
        /// Reachable, but without room for more photos.
        case full
    }

    public let kind: Kind
    public let detail: String

    public init(_ kind: Kind, detail: String) {
        self.kind = kind
        self.detail = detail
    }

    public var description: String { "storage \(kind.rawValue): \(detail)" }
}
