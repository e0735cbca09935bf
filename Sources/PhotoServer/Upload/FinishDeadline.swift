/// The bound on finishing an upload — gathering its bytes, preparing, storing and recording its photo — so that a
/// request whose last bytes arrived is answered within it however slow what the server stands on has become (a
/// bucket that answers each request just within its own 20 s, photos queued for the pipeline): past the bound the
/// work is cancelled and, unless it ended well all the same, it is refused as `unavailable` — 503 with
/// `Retry-After`, the bytes kept, and asking the offset again finishes the upload. Cancelled work ends at its next
/// suspension; what does not suspend is bounded on its own (a database statement by its 10 s deadline).
struct FinishDeadline: Sendable {
    typealias Outcome = Result<String, FinishRefusal>

    let bound: Duration

    /// `work`'s outcome, or `unavailable` when it has not ended well within `bound`.
    func run(_ work: @escaping @Sendable () async -> Outcome) async -> Outcome {
        await withTaskGroup(of: Outcome?.self) { group in
            group.addTask { await work() }
            group.addTask {
                try? await Task.sleep(for: bound)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            if let first { return first }
            // The bound passed (or the request was cancelled): the work's own end, once cancelled, unless it succeeded.
            switch await group.next() ?? nil {
            case .success(let url): return .success(url)
            case .failure(let refusal): return .failure(.init(kind: .unavailable, description: "not finished within \(bound): \(refusal.description)"))
            case nil: return .failure(.init(kind: .unavailable, description: "not finished within \(bound)"))
            }
        }
    }
}
