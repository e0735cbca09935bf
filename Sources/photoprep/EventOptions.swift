import ArgumentParser
import Foundation
import PhotoServer
import PhotoServices

/// `photoprep serve`'s events (docs/serve.md, "Events"): each a flag, else a `PHOTOPREP_EVENTS_*` variable, else the
/// default. The secret is never an argument (`ps` and the shell history would show it): a file, or the environment.
struct EventOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "Where each change's event (photo.stored, group.created, …) is POSTed, signed as Standard Webhooks do (env PHOTOPREP_EVENTS_URL; default none: events are recorded, kept and listed by 'photoprep events', sent nowhere).",
        valueName: "url"))
    var eventsURL: String?

    @Option(help: ArgumentHelp(
        "A file holding the signing secret (whsec_…, made by 'photoprep events secret'), or two, one a line, while rotating: both sign (env PHOTOPREP_EVENTS_SECRET, space-separated).",
        valueName: "file"))
    var eventsSecretFile: String?

    @Option(help: "Seconds one delivery may take (env PHOTOPREP_EVENTS_TIMEOUT; default 10).")
    var eventsTimeout: Double?

    @Option(help: "Attempts before an event is dead, the waits between doubling from 1 s to at most 1 h (env PHOTOPREP_EVENTS_ATTEMPTS; default 16: about 4 hours).")
    var eventsAttempts: Int?

    @Option(help: "Days an event is kept after it was recorded, whatever became of it (env PHOTOPREP_EVENTS_KEEP_DAYS; default 7).")
    var eventsKeepDays: Double?

    @Option(help: ArgumentHelp(
        "A user id that may list and retry the events over the API (GET /v1/events, POST /v1/events/{id}/retry); repeatable (env PHOTOPREP_ADMINS, comma-separated).",
        valueName: "user"))
    var admin: [String] = []

    @Option(help: ArgumentHelp("Seconds before the first retry of an event (then doubling).", visibility: .hidden))
    var eventsFirstDelay: Double = 1

    /// Sets the configuration's events; `setting` is serve's: the flag, else the variable.
    func apply(to configuration: inout PhotoServer.Configuration, _ setting: (String?, String) -> String?) throws {
        let attemptsText = setting(eventsAttempts.map { String($0) }, "PHOTOPREP_EVENTS_ATTEMPTS") ?? "16"
        guard let attempts = Int(attemptsText), (1...100).contains(attempts) else { throw ValidationError("--events-attempts \(attemptsText): 1 to 100") }
        configuration.eventDelivery = EventDelivery(maxAttempts: attempts, firstDelay: .milliseconds(Int(max(eventsFirstDelay, 0.01) * 1000)))
        let keepText = setting(eventsKeepDays.map { String($0) }, "PHOTOPREP_EVENTS_KEEP_DAYS") ?? "7"
        guard let days = Double(keepText), days > 0 else { throw ValidationError("--events-keep-days \(keepText): a number of days, more than 0") }
        configuration.eventsKept = .seconds(days * 24 * 3600)
        let admins = admin.isEmpty ? (setting(nil, "PHOTOPREP_ADMINS") ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } : admin
        configuration.admins = Set(admins.filter { !$0.isEmpty })
        guard let (url, timeout) = try HookOptions.endpoint("events", url: eventsURL, timeout: eventsTimeout, seconds: 10, setting) else { return }
        let secrets: [String]
        if let file = eventsSecretFile {
            do {
                secrets = try String(contentsOfFile: file, encoding: .utf8).split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
                    .filter { !$0.isEmpty }
            } catch {
                throw ValidationError("--events-secret-file \(file): cannot be read (\(error.localizedDescription))")
            }
        } else {
            secrets = (setting(nil, "PHOTOPREP_EVENTS_SECRET") ?? "").split(separator: " ").map(String.init)
        }
        let signer: WebhookSigner
        do {
            signer = try WebhookSigner(secrets: secrets)
        } catch {
            throw ValidationError("--events-url needs its signing secret (--events-secret-file or PHOTOPREP_EVENTS_SECRET): \(error)")
        }
        configuration.eventReceiver = .init(url: url, signer: signer, timeout: timeout)
    }
}
