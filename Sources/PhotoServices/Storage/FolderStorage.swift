public import Foundation
import NIOPosix
import PhotoFiles

/// Photos in a folder on this machine (`file:///srv/storage`): each object a file at its key, written to
/// a temporary file beside it, flushed and renamed into place (`AtomicFile`), so no reader sees part of one.
public struct FolderStorage: PhotoStorage {
    public let root: URL
    public let destination: String

    /// Free space below which the folder counts as full for `probe` (a few of the largest photos with their
    /// thumbnails, and the partial uploads that usually share the disk).
    public var reserve = 64 << 20

    /// `destination`: as configured (a path or a `file://` URL; nil: the root's URL).
    public init(root: URL, destination: String? = nil) {
        self.root = root.standardizedFileURL
        self.destination = destination ?? root.absoluteString
    }

    public func location(of key: String) -> String {
        root.appending(path: key, directoryHint: .notDirectory).absoluteString
    }

    public func put(_ bytes: [UInt8], key: String, contentType: String) async throws(ServiceError) -> StoredPhotos.StoredObject {
        try Self.validate(key)
        let target = Path.join(root.path, key)
        let written: AtomicFile.WriteError? = try await blocking {
            do throws(AtomicFile.WriteError) {
                try AtomicFile.write(bytes, to: target)
                return nil
            } catch {
                return error
            }
        }
        if let written { throw written.full ? .storageFull("\(key) could not be stored: \(written.message)") : .storage("\(key) could not be stored: \(written.message)") }
        return StoredPhotos.StoredObject(location: location(of: key), content: .init(of: bytes))
    }

    public func delete(_ location: String) async throws(ServiceError) {
        guard let path = path(of: location) else { throw .invalidState("\(location) is not in the storage \(root.path)") }
        let failure: String? = try await blocking {
            guard unlink(path) != 0, errno != ENOENT else { return nil }
            return String(cString: strerror(errno))
        }
        if let failure { throw .storage("deleting \(location): \(failure)") }
    }

    /// The file a recorded `file:` location names (the database is the server's own: recorded under another
    /// root, as before a move of the folder, it is still read where it was recorded).
    public func read(key: String, location: String) -> StoredRead {
        guard location.hasPrefix("file:"), let path = URL(string: location)?.path else { return .missing }
        return .file(path: path)
    }

    public func bytes(key: String, location: String) async throws(ServiceError) -> [UInt8]? {
        guard case .file(let path) = read(key: key, location: location) else { return nil }
        return try await blocking { FileManager.default.contents(atPath: path).map { [UInt8]($0) } }
    }

    public func list(prefix: String) async throws(ServiceError) -> [String] {
        let root = root.path
        return try await blocking {
            guard let walk = FileManager.default.enumerator(atPath: Path.join(root, prefix)) else { return [] }
            var keys: [String] = []
            while let name = walk.nextObject() as? String {
                // Hidden names are the folder's own: temporary files being written, partial uploads.
                if Path.name(of: name).hasPrefix(".") || name.hasPrefix(".") { continue }
                if walk.fileAttributes?[.type] as? FileAttributeType == .typeRegular {
                    keys.append(prefix.isEmpty ? name : Path.join(prefix, name))
                }
            }
            return keys.sorted()
        }
    }

    /// The folder exists (it is made if it does not), takes writes and has more than `reserve` bytes free.
    /// Its file system is asked (`access`, `statvfs`) on the blocking pool; nothing is written.
    public func probe(timeout: Duration) async throws(StorageProblem) {
        let (root, reserve) = (root.path, reserve)
        let problem: StorageProblem?
        do throws(ServiceError) {
            problem = try await blocking { () -> StorageProblem? in
                do { try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true) } catch {
                    return StorageProblem(.unavailable, detail: "\(root): \(error.localizedDescription)")
                }
                guard access(root, W_OK) == 0 else { return StorageProblem(.unavailable, detail: "\(root): \(String(cString: strerror(errno)))") }
                var stats = statvfs()
                guard statvfs(root, &stats) == 0 else { return StorageProblem(.unavailable, detail: "\(root): \(String(cString: strerror(errno)))") }
                let free = Int(stats.f_bavail) * Int(stats.f_frsize)
                guard free > reserve else {
                    return StorageProblem(.full, detail: "\(root): \(free >> 20) MiB free, \(reserve >> 20) MiB kept in reserve")
                }
                return nil
            }
        } catch {
            problem = StorageProblem(.unavailable, detail: error.description)
        }
        if let problem { throw problem }
    }

    /// The file of a location in this folder (nil: not a file URL, or outside the folder).
    func path(of location: String) -> String? {
        guard let url = URL(string: location), url.isFileURL else { return nil }
        let path = url.standardizedFileURL.path
        return path.hasPrefix(root.path + "/") ? path : nil
    }

    /// Keys stay inside the folder: no empty, `.` or `..` segments, no absolute paths, no control characters.
    static func validate(_ key: String) throws(ServiceError) {
        let segments = key.split(separator: "/", omittingEmptySubsequences: false)
        guard !key.isEmpty, !key.hasPrefix("/"), segments.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." && !$0.hasPrefix(".") }),
            !key.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else { throw .invalidState("invalid object key \"\(key)\"") }
    }

    /// Blocking file I/O on NIO's blocking pool, never on the cooperative threads.
    private func blocking<T: Sendable>(_ body: @escaping @Sendable () -> T) async throws(ServiceError) -> T {
        do { return try await NIOThreadPool.singleton.runIfActive(body) } catch { throw .storage("the file I/O threads are shut down: \(error)") }
    }
}
