import Logging
import PhotoPrep
import PhotoServices

/// The server's reviewer (`PhotoIntake.take` asks it): the review hook, timed and counted in `/metrics`
/// (`photoprep_review_seconds`, `photoprep_review_verdicts_total{verdict}`), its failures logged and turned into a
/// verdict by its policy.
struct HookReviewer: PhotoReviewer {
    let hook: ReviewHook
    let metrics: ServerMetrics
    let logger: Logger

    func review(_ photo: PreparedPhoto, key: String, caller: String, displayName: String?) async -> ReviewVerdict {
        let started = ContinuousClock.now
        let answer = await hook.ask(photo, key: key, caller: caller, displayName: displayName)
        metrics.reviewSeconds.record(ContinuousClock.now - started)
        switch answer {
        case .verdict(let verdict):
            metrics.review(verdict)
            return verdict
        case .failed(let why):
            metrics.review(nil)
            logger.error("the review hook failed", metadata: ["key": "\(key)", "detail": "\(why)", "policy": "\(hook.onFailure.rawValue)"])
            switch hook.onFailure {
            case .refuse: return .unavailable
            case .allow: return .accept
            case .quarantine: return .quarantine(reason: "not reviewed: the review hook did not answer")
            }
        }
    }
}
