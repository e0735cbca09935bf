#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes files so that no reader ever sees one half-written: a temporary file in the same folder,
/// flushed to disk (`fsync`), then renamed over the target. Used for prepared photos, reports and
/// the services' staged photos.
public enum AtomicFile {
    public static let temporarySuffix = ".photoprep.tmp"

    /// Why a file could not be written: the path and the system's reason.
    public struct WriteError: Error, CustomStringConvertible {
        public var message: String
        /// The caller's `written` asked to stop (nothing is left behind).
        public var stopped = false
        /// The system's error number when the file or its folder could not be created, written or flushed (0: another failure).
        public var code: Int32 = 0
        public var description: String { message }

        public init(message: String, stopped: Bool = false, code: Int32 = 0) {
            self.message = message
            self.stopped = stopped
            self.code = code
        }

        /// Whether the same write would fail again, whenever tried: no permission, a read-only file system,
        /// a file where a folder should be, a name too long.
        public var lasts: Bool { [EACCES, EPERM, EROFS, ENOTDIR, EISDIR, ENAMETOOLONG, ELOOP].contains(code) }

        /// Whether the file system had no room (or the user's quota ran out): the same write may succeed once there is.
        public var full: Bool { code == ENOSPC || code == EDQUOT }
    }

    /// `permissions`: the file's mode (0o600 for private data; a folder it creates is then 0o700). `written` is told
    /// the bytes written so far after each `piece` of them; when it answers false the write stops, the temporary
    /// file is removed and the target left as it was. `flush: false` skips the `fsync`: readers still never see
    /// half a file, but after a power cut the new content may be missing or damaged — only for files whose loss
    /// is harmless.
    public static func write(
        _ bytes: [UInt8], to path: String, permissions: Int = 0o644, flush: Bool = true, piece: Int = .max, written: (Int) -> Bool = { _ in true }
    ) throws(WriteError) {
        let folder = Path.folder(of: path)
        // The target's name, cut to 64 bytes (whole characters) in the temporary one: any name the folder takes has room
        // for the 33 bytes added (a 226-byte name made a temporary one over the 255 a name may have).
        var short = ""
        for character in Path.name(of: path) {
            guard short.utf8.count + character.utf8.count <= 64 else { break }
            short.append(character)
        }
        let temporary = Path.join(folder, ".\(short).\(getpid()).\(UInt32.random(in: 0...UInt32.max))\(temporarySuffix)")
        var fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL, mode_t(permissions))
        if fd < 0 && errno == ENOENT {  // the folder is missing: made only then, not tried part by part before every file
            if let reason = Path.makeFolders(folder, mode: permissions & 0o077 == 0 ? 0o700 : 0o777) {
                throw WriteError(message: "\(folder): cannot create the folder: \(reason.message)", code: reason.code)
            }
            fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL, mode_t(permissions))
        }
        // Named by the file being written: its temporary file is ours, not the user's.
        guard fd >= 0 else { throw WriteError(message: "\(path): cannot create: \(String(cString: strerror(errno)))", code: errno) }
        var code: Int32 = 0, stopped = false
        bytes.withUnsafeBytes { buffer in
            var done = 0
            while done < buffer.count {
                let n = systemWrite(fd, buffer.baseAddress! + done, min(max(1, piece), buffer.count - done))
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { code = n < 0 ? errno : ENOSPC; break }
                done += n
                if !written(done) { stopped = true; break }
            }
        }
        if code == 0, !stopped, flush, fsync(fd) != 0 { code = errno }
        close(fd)
        guard code == 0, !stopped else {
            unlink(temporary)
            if stopped { throw WriteError(message: "\(path): stopped", stopped: true) }
            throw WriteError(message: "\(path): cannot write: \(String(cString: strerror(code)))", code: code)
        }
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw WriteError(message: "\(path): cannot create: \(String(cString: strerror(code)))", code: code)
        }
    }

    /// Removes temporary files a killed run left under `folder`.
    public static func removeLeftovers(under folder: String) {
        guard let paths = try? FileManager.default.subpathsOfDirectory(atPath: folder) else { return }
        for relative in paths where relative.hasSuffix(temporarySuffix) {
            try? FileManager.default.removeItem(atPath: Path.join(folder, relative))
        }
    }
}

#if canImport(Glibc)
private let systemWrite = Glibc.write
#else
private let systemWrite = Darwin.write
#endif
