public import Foundation
import PhotoFiles

/// Where a page of a user's groups ends: opaque to clients (`token`), stable while groups change.
public struct GroupCursor: Sendable, Equatable {
    /// The last group's `updatedAt` in seconds since 1970, exactly as the database holds it (a `Date`
    /// between the two can change its last bit, and the next page would repeat the last group).
    var seconds: Double
    public var id: String
    public var updatedAt: Date { Date(timeIntervalSince1970: seconds) }

    /// The cursor as a URL-safe string.
    public var token: String {
        Data("\(seconds)|\(id)".utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    init(seconds: Double, id: String) {
        self.seconds = seconds
        self.id = id
    }

    /// nil for anything that is not a token this server made.
    public init?(token: String) {
        guard let data = Data(base64URL: token), let text = String(data: data, encoding: .utf8) else { return nil }
        let parts = text.split(separator: "|", maxSplits: 1)
        guard parts.count == 2, let seconds = Double(parts[0]), seconds.isFinite else { return nil }
        self.init(seconds: seconds, id: String(parts[1]))
    }
}
