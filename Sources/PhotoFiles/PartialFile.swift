#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The file an upload in progress keeps its bytes in, on disk: each request's bytes written at the offset it claims,
/// counted only once flushed (`fsync`), cut back when a request's bytes must not count. The uploader's folder
/// destination (`LocalStore`) and the server's uploads in progress (`LocalUploadStore`) both keep theirs in one.
/// Blocking: call it on an I/O thread. Its owner calls `close()`.
public struct PartialFile: Sendable {
    public let fd: Int32
    public let path: String

    /// A file already open for writing.
    public init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
    }

    /// Opens `path` to write at `offset` (the caller knows the file holds that many bytes). At 0 the file is made
    /// (owner-only) when missing — an upload's first bytes, or its bytes again after a power cut lost them; past 0 it
    /// must exist.
    public init(_ path: String, at offset: Int64) throws(AtomicFile.WriteError) {
        let fd = openForWriting(path, creating: offset == 0)
        guard fd >= 0 else { throw Self.failure(path, "cannot open") }
        self.init(fd: fd, path: path)
    }

    /// Writes all of `bytes` at `offset` (not flushed).
    public func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(AtomicFile.WriteError) {
        var done = 0
        while done < bytes.count {
            let n = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw Self.failure(path, "cannot write", code: n < 0 ? errno : ENOSPC) }
            done += n
        }
    }

    /// Makes what was written durable: after this it may be acknowledged.
    public func flush() throws(AtomicFile.WriteError) {
        guard fsync(fd) == 0 else { throw Self.failure(path, "cannot flush") }
    }

    /// Cuts the file back to `length` bytes, durably (best effort: a request's bytes that must not count).
    public func cut(to length: Int64) {
        _ = ftruncate(fd, off_t(length))
        _ = fsync(fd)
    }

    public func close() { closeFile(fd) }

    private static func failure(_ path: String, _ action: String, code: Int32 = errno) -> AtomicFile.WriteError {
        AtomicFile.WriteError(message: "\(path): \(action): \(String(cString: strerror(code)))", code: code)
    }
}

private func openForWriting(_ path: String, creating: Bool) -> Int32 {
    creating ? open(path, O_WRONLY | O_CREAT, 0o600) : open(path, O_WRONLY)
}

private func closeFile(_ fd: Int32) { _ = close(fd) }
