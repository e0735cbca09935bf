import ArgumentParser
import Foundation
import PhotoServer

/// `photoprep serve`'s hook: the app's backend asked before each upload is created (docs/serve.md, "The app's backend
/// in the loop"): each a flag, else a `PHOTOPREP_HOOK_*` variable, else the default.
struct HookOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "The app's backend, POSTed {\"type\": \"upload.create\", \"caller\", \"upload\"} before each upload is created; it answers {\"accept\": true} or {\"accept\": false, \"status\": 4xx, \"message\": \"…\"} (env PHOTOPREP_HOOK_URL; default none).",
        valueName: "url"))
    var hookURL: String?

    @Option(help: "Seconds the hook has to answer (env PHOTOPREP_HOOK_TIMEOUT; default 5).")
    var hookTimeout: Double?

    @Option(help: ArgumentHelp(
        "What a hook that is down, slow or answers garbage means: refuse (503 with Retry-After, nothing created) or allow (created as if accepted); either way it is logged (env PHOTOPREP_HOOK_FAILURE; default refuse).",
        valueName: "refuse|allow"))
    var hookFailure: String?

    /// The hook, if one is given; `setting` is serve's: the flag, else the variable.
    func hook(_ setting: (String?, String) -> String?) throws -> CreationHook? {
        guard let url = setting(hookURL, "PHOTOPREP_HOOK_URL") else { return nil }
        guard let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme ?? ""), parsed.host != nil else {
            throw ValidationError("--hook-url \(url): an http:// or https:// URL")
        }
        let timeoutText = setting(hookTimeout.map { String($0) }, "PHOTOPREP_HOOK_TIMEOUT") ?? "5"
        guard let seconds = Double(timeoutText), seconds > 0, seconds <= 60 else { throw ValidationError("--hook-timeout \(timeoutText): seconds, more than 0 and at most 60") }
        let failureText = setting(hookFailure, "PHOTOPREP_HOOK_FAILURE") ?? "refuse"
        guard let failure = CreationHook.Failure(rawValue: failureText) else { throw ValidationError("--hook-failure \(failureText): refuse or allow") }
        return CreationHook(url: url, timeout: .milliseconds(Int(seconds * 1000)), onFailure: failure)
    }
}
