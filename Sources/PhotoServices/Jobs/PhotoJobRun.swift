public import Foundation

/// One holding of a job by a runner (`JobStore.runs(of:)`).
public struct PhotoJobRun: Codable, Sendable, Equatable {
    public var id: Int64
    public var job: String
    public var runner: String
    public var startedAt: Date
    public var endedAt: Date?
    /// done, pending, failed, cancelled, or "lease expired" (taken over).
    public var outcome: String?
}
