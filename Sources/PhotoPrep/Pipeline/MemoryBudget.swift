#if canImport(Glibc)
import Glibc
#endif

/// Memory that concurrent `PhotoPipeline.prepare` calls share: each reserves what its decode is estimated
/// to hold (`MemoryEstimate`, from the header) before decoding, and waits while the others hold too much, so
/// that a server preparing photos on several threads stays within a bound however large the photos that
/// arrive together (two 17 MP progressive JPEGs hold ~100 MB of coefficients each). Reservations are served
/// in the order they were asked for, so a large photo is not overtaken for ever by small ones; one larger than
/// the whole budget waits until it is alone and then runs.
///
/// Waiting blocks the calling thread: call `prepare` from threads of a bounded pool (the server's pipeline
/// threads), never from Swift's cooperative pool.
public final class MemoryBudget: @unchecked Sendable {
    /// The bytes all reservations together may hold.
    public let bytes: Int
    private var available: Int
    private var nextTicket = 0
    private var serving = 0
    private let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let changed = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    public init(bytes: Int) {
        precondition(bytes > 0)
        self.bytes = bytes
        available = bytes
        pthread_mutex_init(lock, nil)
        pthread_cond_init(changed, nil)
    }

    deinit {
        pthread_cond_destroy(changed)
        pthread_mutex_destroy(lock)
        lock.deallocate()
        changed.deallocate()
    }

    /// Waits until `wanted` bytes (at most the whole budget) are free and this reservation is the next in
    /// line, then takes them; returns what was taken, for `release`.
    func reserve(_ wanted: Int) -> Int {
        let amount = min(max(0, wanted), bytes)
        pthread_mutex_lock(lock)
        let ticket = nextTicket
        nextTicket += 1
        while ticket != serving || available < amount { pthread_cond_wait(changed, lock) }
        serving += 1
        available -= amount
        pthread_cond_broadcast(changed)
        pthread_mutex_unlock(lock)
        return amount
    }

    /// Gives back what `reserve` took.
    func release(_ amount: Int) {
        pthread_mutex_lock(lock)
        available += amount
        pthread_cond_broadcast(changed)
        pthread_mutex_unlock(lock)
    }

    /// The bytes not reserved now.
    public var free: Int {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        return available
    }
}
