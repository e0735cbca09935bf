public import Foundation

/// A group a client created, kept until the server has it: sent again (with the same id, so the
/// server creates it once) until the server answers.
public struct PendingGroup: Codable, Sendable, Equatable {
    public enum State: String, Codable, Sendable {
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

    public init(
        id: String, name: String, participants: [String], photoJob: String?, state: State, error: String?, attempts: Int, createdAt: Date,
        updatedAt: Date
    ) {
        (self.id, self.name, self.participants, self.photoJob, self.state) = (id, name, participants, photoJob, state)
        (self.error, self.attempts, self.createdAt, self.updatedAt) = (error, attempts, createdAt, updatedAt)
    }

    // The participants are one JSON text in the database (the same on SQLite and PostgreSQL).
    enum CodingKeys: String, CodingKey {
        case id, name, participants, photoJob, state, error, attempts, createdAt, updatedAt
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let participants = try c.decode(String.self, forKey: .participants)
        self.init(
            id: try c.decode(String.self, forKey: .id), name: try c.decode(String.self, forKey: .name),
            participants: try JSONDecoder().decode([String].self, from: Data(participants.utf8)),
            photoJob: try c.decodeIfPresent(String.self, forKey: .photoJob), state: try c.decode(State.self, forKey: .state),
            error: try c.decodeIfPresent(String.self, forKey: .error), attempts: try c.decode(Int.self, forKey: .attempts),
            createdAt: try c.decode(Date.self, forKey: .createdAt), updatedAt: try c.decode(Date.self, forKey: .updatedAt))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(name, forKey: .name)
        try c.encode(String(decoding: try JSONEncoder().encode(participants), as: UTF8.self), forKey: .participants)
        try c.encode(photoJob, forKey: .photoJob)
        try c.encode(state, forKey: .state)
        try c.encode(error, forKey: .error)
        try c.encode(attempts, forKey: .attempts)
        try c.encode(createdAt, forKey: .createdAt)
        try c.encode(updatedAt, forKey: .updatedAt)
    }
}
