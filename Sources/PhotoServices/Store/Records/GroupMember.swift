public struct GroupMember: Codable, Sendable, Equatable {
    public var groupId: String
    public var userId: String
    public var isAdmin: Bool
}
