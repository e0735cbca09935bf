import ArgumentParser
import Foundation
import PhotoBatch
import PhotoServices

/// `photoprep events`: the outbox of events `photoprep serve` delivers (docs/serve.md, "Events"): list them, send dead
/// ones again, replay delivered ones, make a signing secret.
struct EventsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events", abstract: "List, retry and replay the events photoprep serve delivers; make a signing secret.",
        subcommands: [List.self, Retry.self, Replay.self, Secret.self], defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The newest events, newest first: id, type, subject, state, attempts, recorded, last error.")

        @Option(help: "Only events in this state: pending, delivered or dead.")
        var state: String?

        @Option(help: "At most this many.")
        var limit = 50

        @OptionGroup var service: ServiceOptions

        func run() async throws {
            var wanted: OutboxEvent.State?
            if let state {
                guard let known = OutboxEvent.State(rawValue: state) else { throw ValidationError("--state \(state): pending, delivered or dead") }
                wanted = known
            }
            let outbox = Outbox(database: try await service.services().database)
            let events = try await serviceCall { [wanted] in try await outbox.events(in: wanted, limit: max(limit, 1)) }
            for event in events {
                if service.json {
                    var line: [String: Any] = [
                        "id": event.id, "type": event.type, "subject": event.subject, "state": event.state.rawValue, "attempts": event.attempts,
                        "recordedAt": Self.stamp(event.createdAt), "body": (try? JSONSerialization.jsonObject(with: Data(event.body.utf8))) ?? event.body,
                    ]
                    if let error = event.lastError { line["lastError"] = error }
                    if let delivered = event.deliveredAt { line["deliveredAt"] = Self.stamp(delivered) }
                    if event.state == .pending { line["nextAttemptAt"] = Self.stamp(event.nextAttemptAt) }
                    let data = try JSONSerialization.data(withJSONObject: line, options: [.sortedKeys, .withoutEscapingSlashes])
                    print(String(decoding: data, as: UTF8.self))
                } else {
                    let error = event.lastError.map { "  (\($0))" } ?? ""
                    print("\(event.id)  \(event.type)  \(event.subject)  \(event.state.rawValue)  attempts \(event.attempts)  \(Self.stamp(event.createdAt))\(error)")
                }
            }
        }

        static func stamp(_ date: Date) -> String {
            ISO8601DateFormatter.string(from: date, timeZone: TimeZone(identifier: "UTC")!, formatOptions: [.withInternetDateTime])
        }
    }

    struct Retry: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Send dead events again, from a first attempt: those named, or every dead one.")

        @Argument(help: "Event ids (default: every dead event).")
        var ids: [String] = []

        @OptionGroup var service: ServiceOptions

        func run() async throws {
            let outbox = Outbox(database: try await service.services().database)
            let events = try await serviceCall { ids.isEmpty ? try await outbox.resend(nil) : try await outbox.resend(ids) }
            try EventsCommand.report(events, asked: ids, json: service.json)
        }
    }

    struct Replay: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Send events again, delivered ones too, under the same webhook-id (a receiver that keeps ids ignores them; one that lost them gets them).")

        @Argument(help: "Event ids.")
        var ids: [String]

        @OptionGroup var service: ServiceOptions

        func run() async throws {
            let outbox = Outbox(database: try await service.services().database)
            let events = try await serviceCall { try await outbox.resend(ids) }
            try EventsCommand.report(events, asked: ids, json: service.json)
        }
    }

    struct Secret: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print a new signing secret (whsec_…) for serve's --events-secret-file and the receiver.")

        func run() {
            print(WebhookSigner.newSecret())
        }
    }

    /// Says which events will be sent again; an id asked for that is not among them is pending already or not kept (exit 1).
    static func report(_ resent: [String], asked: [String], json: Bool) throws {
        for id in resent { print(json ? #"{"id":"\#(id)","state":"pending"}"# : "\(id): pending, sent again") }
        let missing = asked.filter { !resent.contains($0) }
        if resent.isEmpty && asked.isEmpty { print(json ? "" : "no dead events") }
        guard missing.isEmpty else { throw CommandFailure(message: "\(missing.joined(separator: ", ")): no such event kept, or it is pending already") }
    }
}
