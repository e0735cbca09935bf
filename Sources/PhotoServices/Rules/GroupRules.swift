import Foundation
import PhotoFiles

/// The group-chat rules the app's stories and QA review fixed. Kept here and nowhere else.
public enum GroupRules {
    public static let maxNameLength = 50
    /// Participants besides the creator.
    public static let minOtherParticipants = 2
    /// Members in a group, the creator included.
    public static let maxMembers = 256

    /// The name as stored: control and invisible format characters removed, whitespace trimmed, 1–50
    /// characters with at least one visible (`NameRules.cleaned`).
    public static func normalizedName(_ name: String) throws(ServiceError) -> String {
        guard let cleaned = NameRules.cleaned(name) else { throw .groupNameEmpty }
        guard cleaned.count <= maxNameLength else { throw .groupNameTooLong(cleaned.count) }
        try NameRules.checkCharacters(cleaned, "the group name", refusal: ServiceError.groupNameInvalid)
        return cleaned
    }

    /// The other participants: de-duplicated in their given order, without the creator; at least 2,
    /// and at most 255 so that the group, creator included, has at most 256 members.
    public static func otherParticipants(creator: String, _ participants: [String]) throws(ServiceError) -> [String] {
        var seen: Set<String> = [creator]
        let others = participants.filter { seen.insert($0).inserted }
        guard others.count >= minOtherParticipants else { throw .tooFewParticipants(others.count) }
        guard others.count + 1 <= maxMembers else { throw .tooManyMembers(others.count + 1) }
        return others
    }

    /// A creation as the rules accept it, checked in this order: the name (`normalizedName`), every user
    /// id a safe identifier, the other participants (`otherParticipants`), and the group's id — the
    /// client's UUID (lowercased) when given, else a new one.
    public static func creation(
        creator: String, name: String, participants: [String], id: String?
    ) throws(ServiceError) -> (name: String, others: [String], id: String) {
        let name = try normalizedName(name)
        for user in [creator] + participants { _ = try StorageRules.validated(user, "user id") }
        let others = try otherParticipants(creator: creator, participants)
        guard let id else { return (name, others, randomUUID()) }
        guard let uuid = UUID(uuidString: id) else { throw .invalidIdentifier("the group id \(id.debugDescription) is not a UUID") }
        return (name, others, uuid.uuidString.lowercased())
    }

    /// The system message recorded when a group is created.
    public static func createdMessage(creatorName: String) -> String { "\(creatorName) created the group" }
}
