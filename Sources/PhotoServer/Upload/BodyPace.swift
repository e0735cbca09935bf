/// How slowly a request body may arrive — Apache's `mod_reqtimeout` rule (`body=20,MinRate=500`): `grace` for
/// the first bytes, and each `minRate` bytes received buy one more second. A client trickling a byte every
/// ten seconds is cut after `grace`; a 50 KB/s mobile upload earns 100 s a second. `minRate` 0: no limit.
struct BodyPace: Sendable {
    var grace: Duration = .seconds(20)
    var minRate = 500

    func deadline(started: ContinuousClock.Instant, received: Int64) -> ContinuousClock.Instant {
        guard minRate > 0 else { return started + .seconds(100 * 365 * 86_400) }
        return started + grace + .milliseconds(received * 1000 / Int64(minRate))
    }
}
