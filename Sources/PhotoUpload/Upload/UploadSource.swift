import Crypto
import Foundation
import PhotoFiles

/// The bytes to upload: in memory, or a file read chunk by chunk (memory bounded by the chunk size).
public enum UploadSource: Sendable {
    case bytes([UInt8])
    case file(String)

    /// Opens the source for reading: its length, a chunk reader and, when `hashing` (a journal recognises
    /// the same content by it), its content hash.
    func open(hashing: Bool) throws(UploadError) -> OpenSource {
        switch self {
        case .bytes(let bytes):
            return OpenSource(length: Int64(bytes.count), sha256: hashing ? hex(SHA256.hash(data: bytes)) : nil, storage: .bytes(bytes))
        case .file(let path):
            let fd = Foundation.open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)  // a FIFO never blocks the open: refused below
            guard fd >= 0 else { throw UploadError(.io, "\(path): cannot open: \(String(cString: strerror(errno)))") }
            var status = stat()
            guard fstat(fd, &status) == 0 else {
                close(fd)
                throw UploadError(.io, "\(path): cannot stat: \(String(cString: strerror(errno)))")
            }
            guard (status.st_mode & S_IFMT) == S_IFREG else {
                close(fd)
                throw UploadError(.io, "\(path): not a regular file")
            }
            let length = Int64(status.st_size)
            guard hashing else { return OpenSource(length: length, sha256: nil, storage: .file(fd, path)) }
            // Hash through one reused buffer: no allocation per piece.
            var hasher = SHA256()
            var offset: Int64 = 0
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 64)
            defer { buffer.deallocate() }
            while offset < length {
                let n = pread(fd, buffer.baseAddress!, Int(min(Int64(buffer.count), length - offset)), off_t(offset))
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else {
                    close(fd)
                    throw UploadError(.io, "\(path): cannot read at \(offset): the file changed or is unreadable")
                }
                hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: buffer[..<n]))
                offset += Int64(n)
            }
            return OpenSource(length: length, sha256: hex(hasher.finalize()), storage: .file(fd, path))
        }
    }
}

/// An opened source; a file descriptor is closed when the last copy goes away.
final class OpenSource: Sendable {
    enum Storage: Sendable {
        case bytes([UInt8])
        case file(Int32, String)
    }

    let length: Int64
    /// The content's SHA-256, in hex (nil when not asked for).
    let sha256: String?
    let storage: Storage

    init(length: Int64, sha256: String?, storage: Storage) {
        self.length = length
        self.sha256 = sha256
        self.storage = storage
    }

    deinit {
        if case .file(let fd, _) = storage { close(fd) }
    }

    func read(offset: Int64, length: Int) throws(UploadError) -> [UInt8] {
        switch storage {
        case .bytes(let bytes):
            return Array(bytes[Int(offset)..<(Int(offset) + length)])
        case .file(let fd, let path):
            return try Self.read(fd: fd, path: path, offset: offset, length: length)
        }
    }

    static func read(fd: Int32, path: String, offset: Int64, length: Int) throws(UploadError) -> [UInt8] {
        do {
            var failed = false
            let chunk = [UInt8](unsafeUninitializedCapacity: length) { buffer, count in
                var done = 0
                while done < length {
                    let n = pread(fd, buffer.baseAddress! + done, length - done, off_t(offset) + off_t(done))
                    if n < 0 && errno == EINTR { continue }
                    if n <= 0 { failed = true; break }
                    done += n
                }
                count = done
            }
            if failed { throw UploadError(.io, "\(path): cannot read \(length) bytes at \(offset): the file changed or is unreadable") }
            return chunk
        }
    }
}

func sha256(_ bytes: [UInt8]) -> [UInt8] { Array(SHA256.hash(data: bytes)) }
