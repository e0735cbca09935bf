import ArgumentParser
import Foundation
import PhotoBatch
import PhotoServices

/// `photoprep quarantine`: the photos the app's review quarantined (`photoprep serve --review-url`), and the admins'
/// decisions on them — what `GET /v1/quarantine` and `POST /v1/quarantine/release|reject` do, from the server's own
/// machine (docs/serve.md, "The review hook").
struct QuarantineCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "quarantine", abstract: "List the photos the review quarantined; release or reject one.",
        subcommands: [List.self, Release.self, Reject.self], defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The quarantined photos, newest first: key, why, who uploaded it, size, when.")

        @Option(help: "At most this many.")
        var limit = 100

        @OptionGroup var service: ServiceOptions

        func run() async throws {
            let moderation = try await service.services().moderation
            let photos = try await serviceCall { try await moderation.quarantined(limit: max(limit, 1)) }
            for photo in photos { try QuarantineCommand.print(photo, json: service.json) }
        }
    }

    /// What a decision on one photo takes: the photo, the admin deciding, the services.
    struct Decision: ParsableArguments {
        @Argument(help: "The photo's storage key.")
        var key: String

        @Option(name: .customLong("as"), help: "The admin deciding (recorded in the event).")
        var admin: String?

        @OptionGroup var service: ServiceOptions

        /// The moderation of the embedded services, and the admin (`--as` is required).
        func moderation() async throws -> (Moderation, String) {
            let admin = try service.caller(admin)
            return (try await service.services().moderation, admin)
        }
    }

    struct Release: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Release a quarantined photo: its links go to everyone who may see it (event photo.released).")

        @OptionGroup var decision: Decision

        func run() async throws {
            let (moderation, admin) = try await decision.moderation()
            let photo = try await serviceCall { try await moderation.release(decision.key, by: admin) }
            try QuarantineCommand.print(photo, json: decision.service.json, state: "released")
        }
    }

    struct Reject: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Reject a quarantined photo: deleted as its owner would delete it (event photo.deleted with the admin and the reason).")

        @OptionGroup var decision: Decision

        @Option(help: "Why (recorded in the event).")
        var reason: String

        func run() async throws {
            let (moderation, admin) = try await decision.moderation()
            let photo = try await serviceCall { try await moderation.reject(decision.key, by: admin, reason: reason) }
            try QuarantineCommand.print(photo, json: decision.service.json, state: "rejected")
        }
    }

    /// One photo a line: as text, or as a JSON object (`--json`).
    static func print(_ photo: StoredPhoto, json: Bool, state: String? = nil) throws {
        let stamp = ISO8601DateFormatter.string(from: photo.storedAt, timeZone: TimeZone(identifier: "UTC")!, formatOptions: [.withInternetDateTime])
        if json {
            var line: [String: Any] = ["key": photo.key, "size": photo.size, "storedAt": stamp]
            if let reason = photo.quarantine { line["quarantine"] = reason }
            if let uploader = photo.uploadedBy { line["uploadedBy"] = uploader }
            if let state { line["state"] = state }
            let data = try JSONSerialization.data(withJSONObject: line, options: [.sortedKeys, .withoutEscapingSlashes])
            Swift.print(String(decoding: data, as: UTF8.self))
        } else {
            let why = photo.quarantine.map { "  (\($0))" } ?? ""
            Swift.print("\(photo.key)  \(state ?? "quarantined")  uploaded by \(photo.uploadedBy ?? "?")  \(photo.size) bytes  \(stamp)\(why)")
        }
    }
}
