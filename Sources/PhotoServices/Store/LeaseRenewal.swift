/// A lease held in the shared database while work runs — a photo job by its runner, an upload's finishing
/// by its instance: renewed every third of its duration until the work ends, so that a holder that
/// vanished loses it once it runs out and another takes over. The one renewal loop both use.
public enum LeaseRenewal {
    /// Runs `work` while `renew` extends the lease every third of `duration`. `renew` returns false when
    /// the lease is lost (another holder has it): renewal stops and `lost` is called, once; a renewal that
    /// fails for another reason (the database briefly unreachable) returns true and is tried again next time.
    /// `atMost`: renewal stops once this long has passed, the work still running — a holder stuck on what never
    /// answers lets its lease run out, so that another may take the work over.
    public static func holding<Result>(
        for duration: Duration, atMost: Duration? = nil, renew: @escaping @Sendable () async -> Bool, lost: @escaping @Sendable () -> Void = {},
        _ work: () async -> Result
    ) async -> Result {
        await withTaskGroup(of: Void.self) { group -> Result in
            group.addTask {
                let started = ContinuousClock.now
                while (try? await Task.sleep(for: duration / 3)) != nil {
                    if let atMost, ContinuousClock.now - started >= atMost { return }
                    if await !renew() {
                        lost()
                        return
                    }
                }
            }
            defer { group.cancelAll() }
            return await work()
        }
    }
}
