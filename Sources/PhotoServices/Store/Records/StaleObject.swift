public import Foundation

/// A stored object that should be gone — a replaced profile picture — but whose deletion failed; `sync()`
/// tries again.
public struct StaleObject: Codable, Sendable, Equatable {
    public var url: String
    /// Whose credentials delete it.
    public var caller: String
    /// Why the last attempt failed.
    public var error: String
    public var attempts: Int
    public var updatedAt: Date
}
