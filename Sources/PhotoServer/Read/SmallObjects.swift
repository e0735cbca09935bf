import Foundation
import NIOCore
import NIOPosix
import PhotoServices
import Synchronization

/// Small stored objects — up to 512 KiB: thumbnails, avatars, group photos (normalised under 500 KiB) — kept
/// in memory by their SHA-256, so that a busy list of avatars is answered without opening a file each time,
/// and on the event loop (`MediaOnEventLoop`). The bytes of a version never change, so a
/// cached object can never be stale (the photo's record, its token and the read rules are still checked
/// on every request); one read from disk whose bytes do not hash to the record's version (the file was
/// replaced meanwhile) is not kept. At most 64 MiB, the oldest dropped first.
final class SmallObjects: Sendable {
    static let largest = 512 * 1024
    static let capacity = 64 << 20
    private let state = Mutex<(objects: [String: ByteBuffer], order: [String], total: Int)>(([:], [], 0))

    /// The bytes whose SHA-256 is `sha256` if they are in memory.
    func cached(_ sha256: String) -> ByteBuffer? { state.withLock { $0.objects[sha256] } }

    /// The bytes whose SHA-256 is `sha256`: from memory, or read from the file `file()` names and kept.
    func bytes(_ sha256: String, file: () -> String?) async -> ByteBuffer? {
        if let cached = cached(sha256) { return cached }
        guard let file = file(), let data = try? await NIOThreadPool.singleton.runIfActive({ FileManager.default.contents(atPath: file) }),
            data.count <= Self.largest, StoredPhotos.Content(of: [UInt8](data)).sha256 == sha256
        else { return nil }
        let buffer = ByteBuffer(bytes: data)
        state.withLock { state in
            guard state.objects[sha256] == nil else { return }
            state.objects[sha256] = buffer
            state.order.append(sha256)
            state.total += buffer.readableBytes
            while state.total > Self.capacity, !state.order.isEmpty {
                let oldest = state.order.removeFirst()
                state.total -= state.objects.removeValue(forKey: oldest)?.readableBytes ?? 0
            }
        }
        return buffer
    }
}
