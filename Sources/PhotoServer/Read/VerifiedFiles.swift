import Crypto
#if canImport(Glibc)
import Glibc
#endif
import Hummingbird
import NIOCore
import NIOPosix
import PhotoFiles
import Synchronization

/// The files of the local store whose bytes were checked against a photo's record, by the identity of the file
/// (`FileIdentity`): a download URL streams only bytes that hash to the version it names. A new photo is stored
/// over the old one's file before its record is written — for the moment between, or for as long as the database
/// refuses the record — and the old URL would otherwise stream the new bytes under the old `ETag`, `Content-Length`
/// and a year of `immutable`. A file is hashed once for each identity it has (a new file, or one written since, has
/// a new one); later requests cost one `stat`. Streaming then opens the file and checks it is still that file: one
/// replaced in between is not streamed (the connection is cut, as for a file that cannot be read), never served as
/// the old version.
final class VerifiedFiles: Sendable {
    static let capacity = 10_000
    /// By path: the same photo stored at two keys is two files, each checked once.
    private let known = Mutex<[String: (sha256: String, identity: FileIdentity)]>([:])

    /// The identity of the file at `path` when its bytes are the version `sha256` of `size` bytes; nil otherwise
    /// (missing, another size, other bytes).
    func identity(of path: String, sha256: String, size: Int64) async -> FileIdentity? {
        if let now = FileIdentity(path: path), let checked = known.withLock({ $0[path] }), checked.sha256 == sha256, checked.identity == now {
            return now
        }
        guard let checked = try? await NIOThreadPool.singleton.runIfActive({ Self.hashed(path, size: size) }), checked.sha256 == sha256 else {
            return nil
        }
        known.withLock { known in
            if known.count >= Self.capacity { known.removeAll(keepingCapacity: true) }
            known[path] = (sha256, checked.identity)
        }
        return checked.identity
    }

    /// The file's identity and the SHA-256 of its bytes, read through one descriptor (nil: unreadable, or not `size`
    /// bytes long).
    static func hashed(_ path: String, size: Int64) -> (identity: FileIdentity, sha256: String)? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        guard let identity = FileIdentity(fd: fd), identity.size == size else { return nil }
        var hasher = SHA256()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var total: Int64 = 0
        while true {
            let read = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            guard read >= 0 else { return nil }
            if read == 0 { break }
            hasher.update(data: buffer[..<read])
            total += Int64(read)
        }
        guard total == size, FileIdentity(fd: fd) == identity else { return nil }  // not written to while read
        return (identity, hex(hasher.finalize()))
    }

    /// `range` of the file at `path`, in chunks of `chunkLength`, read through a descriptor that is still `identity`'s
    /// file: a file replaced since it was checked fails the answer (`FileChanged`) before a byte of it is sent.
    static func stream(_ path: String, identity: FileIdentity, range: ClosedRange<Int>, chunkLength: Int = 128 * 1024) -> ResponseBody {
        ResponseBody(contentLength: range.count) { writer in
            let pool = NIOThreadPool.singleton
            let fd = try await pool.runIfActive { open(path, O_RDONLY | O_CLOEXEC) }
            guard fd >= 0 else { throw FileChanged(path: path) }
            defer { close(fd) }
            guard FileIdentity(fd: fd) == identity else { throw FileChanged(path: path) }
            var offset = range.lowerBound
            while offset <= range.upperBound {
                let length = min(chunkLength, range.upperBound + 1 - offset)
                let chunk = try await pool.runIfActive { [offset] () throws -> ByteBuffer in
                    var chunk = ByteBufferAllocator().buffer(capacity: length)
                    let read = chunk.writeWithUnsafeMutableBytes(minimumWritableBytes: length) { pread(fd, $0.baseAddress, length, off_t(offset)) }
                    guard read == length else { throw FileChanged(path: path) }  // shorter than its record: cut
                    return chunk
                }
                try await writer.write(chunk)
                offset += length
            }
            try await writer.finish(nil)
        }
    }

    struct FileChanged: Error, CustomStringConvertible {
        var path: String
        var description: String { "\(path): not the file that was checked (replaced or cut short since)" }
    }
}
