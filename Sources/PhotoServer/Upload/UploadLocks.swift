import Synchronization

/// Requests writing to uploads in this process: one at a time per upload.
final class UploadLocks: Sendable {
    private let held = Mutex<Set<String>>([])

    func lock(_ id: String) -> Bool { held.withLock { $0.insert(id).inserted } }
    func unlock(_ id: String) { _ = held.withLock { $0.remove(id) } }
}
