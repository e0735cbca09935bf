import Synchronization

/// A count of the photos being prepared or waiting for it, and its bound.
final class Admission: Sendable {
    let capacity: Int
    private let inside = Mutex(0)

    init(capacity: Int) { self.capacity = capacity }

    /// Counts one more, unless `capacity` are in already.
    func enter() -> Bool {
        inside.withLock { count in
            guard count < capacity else { return false }
            count += 1
            return true
        }
    }

    func leave() { inside.withLock { $0 -= 1 } }
}
