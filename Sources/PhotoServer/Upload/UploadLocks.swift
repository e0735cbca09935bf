import Synchronization

/// The upload core's locker (as tusd's handler has one beside its data store): one request at a time per upload in
/// this process — writing, finishing, or sweeping it. Across instances, `SharedUploadStore`'s finish lease decides.
final class UploadLocks: Sendable {
    private let held = Mutex<Set<String>>([])

    func lock(_ id: String) -> Bool { held.withLock { $0.insert(id).inserted } }
    func unlock(_ id: String) { _ = held.withLock { $0.remove(id) } }
}
