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

    @Option(help: ArgumentHelp(
        "The app's review (moderation), POSTed each prepared photo {\"type\": \"photo.review\", \"caller\", \"photo\" (its bytes in base64), \"thumbnails\"} before it is stored; it answers {\"verdict\": \"accept\"}, {\"verdict\": \"reject\", \"reason\": \"…\"} (422, nothing stored) or {\"verdict\": \"quarantine\", \"reason\": \"…\"} (stored, shown to its uploader and the admins only until released) (env PHOTOPREP_REVIEW_URL; default none).",
        valueName: "url"))
    var reviewURL: String?

    @Option(help: "Seconds the review has to answer (env PHOTOPREP_REVIEW_TIMEOUT; default 10).")
    var reviewTimeout: Double?

    @Option(help: ArgumentHelp(
        "What a review that is down, slow or answers garbage means: refuse (503, the client asks again), allow (stored) or quarantine; either way it is logged (env PHOTOPREP_REVIEW_FAILURE; default refuse).",
        valueName: "refuse|allow|quarantine"))
    var reviewFailure: String?

    /// The review hook, if one is given; `setting` is serve's: the flag, else the variable.
    func review(_ setting: (String?, String) -> String?) throws -> ReviewHook? {
        guard let (url, timeout) = try Self.endpoint("review", url: reviewURL, timeout: reviewTimeout, seconds: 10, setting) else { return nil }
        let failureText = setting(reviewFailure, "PHOTOPREP_REVIEW_FAILURE") ?? "refuse"
        guard let failure = ReviewHook.Failure(rawValue: failureText) else { throw ValidationError("--review-failure \(failureText): refuse, allow or quarantine") }
        return ReviewHook(url: url, timeout: timeout, onFailure: failure)
    }

    /// The hook, if one is given; `setting` is serve's: the flag, else the variable.
    func hook(_ setting: (String?, String) -> String?) throws -> CreationHook? {
        guard let (url, timeout) = try Self.endpoint("hook", url: hookURL, timeout: hookTimeout, seconds: 5, setting) else { return nil }
        let failureText = setting(hookFailure, "PHOTOPREP_HOOK_FAILURE") ?? "refuse"
        guard let failure = CreationHook.Failure(rawValue: failureText) else { throw ValidationError("--hook-failure \(failureText): refuse or allow") }
        return CreationHook(url: url, timeout: timeout, onFailure: failure)
    }

    /// `--NAME-url` and `--NAME-timeout` (else `PHOTOPREP_NAME_URL`, `…_TIMEOUT`; the timeout's default `seconds`): the
    /// app's backend at an http(s) URL, asked within 0–60 s. nil: no URL given.
    static func endpoint(
        _ name: String, url flag: String?, timeout: Double?, seconds: Double, _ setting: (String?, String) -> String?
    ) throws -> (url: String, timeout: Duration)? {
        let variable = "PHOTOPREP_\(name.uppercased())"
        guard let url = setting(flag, "\(variable)_URL") else { return nil }
        guard let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme ?? ""), parsed.host != nil else {
            throw ValidationError("--\(name)-url \(url): an http:// or https:// URL")
        }
        let timeoutText = setting(timeout.map { String($0) }, "\(variable)_TIMEOUT") ?? String(seconds)
        guard let given = Double(timeoutText), given > 0, given <= 60 else {
            throw ValidationError("--\(name)-timeout \(timeoutText): seconds, more than 0 and at most 60")
        }
        return (url, .milliseconds(Int(given * 1000)))
    }
}
