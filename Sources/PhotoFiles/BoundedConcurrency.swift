/// Work on many items with at most `limit` running at once, as child tasks of the caller (structured:
/// the call returns when every started item ended, and cancelling the caller cancels them). The one
/// loop the batch, the uploader, the `upload` command and the server's stores share.
public enum BoundedConcurrency {
    /// Runs `work` for the items `0..<count`, started in `order` (default: ascending), at most `limit`
    /// at a time; `finished` sees each result on the calling task as it ends (completion order, one at a
    /// time). No item starts once `keepStarting` says false. Returns how many items were started.
    @discardableResult
    public static func run<Result: Sendable>(
        count: Int, limit: Int, order: [Int]? = nil, keepStarting: () -> Bool = { true },
        _ work: @escaping @Sendable (Int) async -> Result,
        finished: (Int, Result) async -> Void = { _, _ in }
    ) async -> Int {
        let order = order ?? Array(0..<count)
        return await withTaskGroup(of: (Int, Result).self) { group in
            var next = 0
            func startNext() {
                guard next < order.count, keepStarting() else { return }
                let index = order[next]
                next += 1
                group.addTask { (index, await work(index)) }
            }
            for _ in 0..<max(1, min(limit, order.count)) { startNext() }
            while let (index, result) = await group.next() {
                await finished(index, result)
                startNext()
            }
            return next
        }
    }
}
