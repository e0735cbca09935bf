#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Slash-separated file paths as strings, for the few operations the package needs (without
/// Foundation's `NSString`, which FoundationEssentials does not have).
public enum Path {
    /// `folder/name`; `name` alone when `folder` is empty.
    public static func join(_ folder: String, _ name: String) -> String {
        if folder.isEmpty { return name }
        return folder.hasSuffix("/") ? folder + name : folder + "/" + name
    }

    /// Everything before the last `/` (`"."` when there is none, `"/"` for a file in the root).
    public static func folder(of path: String) -> String {
        let trimmed = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
        guard let slash = trimmed.lastIndex(of: "/") else { return "." }
        return slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
    }

    /// The last component (`"c.jpg"` for `"/a/b/c.jpg"`).
    public static func name(of path: String) -> String {
        let trimmed = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
        guard let slash = trimmed.lastIndex(of: "/") else { return trimmed }
        return String(trimmed[trimmed.index(after: slash)...])
    }

    /// Makes `path` and its missing parents (`mkdir -p`) with `mode`; returns the system's reason
    /// when it cannot. From the deepest folder up, only as far as folders are missing: one call when the
    /// parent exists, not one for every part of the path.
    public static func makeFolders(_ path: String, mode: Int = 0o777) -> (message: String, code: Int32)? {
        if mkdir(path, mode_t(mode)) == 0 || errno == EEXIST { return nil }
        guard errno == ENOENT else { return failure(errno) }
        let parent = folder(of: path)
        guard parent != path, parent != ".", parent != "/" else { return failure(ENOENT) }
        if let reason = makeFolders(parent, mode: mode) { return reason }
        if mkdir(path, mode_t(mode)) == 0 || errno == EEXIST { return nil }
        return failure(errno)
    }

    private static func failure(_ code: Int32) -> (message: String, code: Int32) { (String(cString: strerror(code)), code) }

    /// Whether `path` is a folder (following links).
    public static func isFolder(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR
    }

    /// The size in bytes of the file at `path` (following links), or nil when there is none.
    public static func size(of path: String) -> Int? {
        var status = stat()
        return stat(path, &status) == 0 ? Int(status.st_size) : nil
    }
}
