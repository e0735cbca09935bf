public import Foundation

public struct Message: Codable, Sendable, Equatable {
    public var id: Int64?
    public var groupId: String
    public var sender: String
    public var text: String
    public var isSystem: Bool
    public var createdAt: Date
}
