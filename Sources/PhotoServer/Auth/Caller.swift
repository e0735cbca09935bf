/// Who is calling: the `sub` of a verified token.
public struct Caller: Sendable, Equatable {
    public var id: String
    /// The token's `name` claim, when it has one (used when the store adds the caller as a user).
    public var displayName: String?
}
