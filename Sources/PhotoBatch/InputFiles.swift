#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import PhotoFiles
#if canImport(Glibc)
import Glibc
#endif

/// One input photo and the path of its output relative to `--out`.
package struct InputFile: Sendable {
    package var path: String
    package var relativeOutput: String
}

/// Expands files and folders (recursively, hidden files skipped) into input files, each with an output
/// path that mirrors its place under the input folder, with a `.jpg` extension.
package enum InputFiles {
    /// `skipped` hears of entries that cannot be inputs at all (names that are not UTF-8, which
    /// cannot be named in a report or a manifest): they are reported, never dropped silently.
    package static func expand(
        _ inputs: [String], excluding outputRoot: String, skipped: (String, String) -> Void = { _, _ in }
    ) throws -> [InputFile] {
        let excluded = realPath(outputRoot)
        var files: [InputFile] = []
        for input in inputs {
            guard Path.size(of: input) != nil else { throw CommandFailure(message: "\(input): no such file or folder") }
            if !Path.isFolder(input) {
                files.append(InputFile(path: input, relativeOutput: outputName(Path.name(of: input))))
                continue
            }
            let root = absolute(input)
            var found: [InputFile] = []
            walk(root, relative: "", excluding: excluded) { path, relative in
                found.append(InputFile(path: path, relativeOutput: Path.name(of: root) + "/" + outputName(relative)))
            } undecodable: { folder, count in
                skipped(folder, "\(count) entr\(count == 1 ? "y" : "ies") whose name is not valid UTF-8 (rename to include)")
            }
            files += found.sorted { $0.path < $1.path }
        }
        return disambiguated(files)
    }

    /// Visits the regular files under `folder` (hidden entries skipped). Symbolic links are
    /// followed to files — what counts is the file they point at — but not into folders, so a link
    /// cannot make the walk loop; the output folder, when it lies inside, is not entered.
    static func walk(
        _ folder: String, relative: String, excluding excluded: String?,
        file: (_ path: String, _ relative: String) -> Void, undecodable: (_ folder: String, _ count: Int) -> Void
    ) {
        guard let dir = opendir(folder) else { return }
        var names: [(String, UInt8)] = []
        var count = 0
        while let entry = readdir(dir) {
            let bytes = withUnsafeBytes(of: entry.pointee.d_name) { raw in Array(raw.prefix { $0 != 0 }) }
            guard let name = String(validating: bytes, as: UTF8.self) else { count += 1; continue }
            if !name.hasPrefix(".") { names.append((name, entry.pointee.d_type)) }
        }
        closedir(dir)
        if count > 0 { undecodable(folder, count) }
        for (name, type) in names {
            let path = folder + "/" + name, inner = relative.isEmpty ? name : relative + "/" + name
            var status = stat()
            // Some file systems do not say an entry's type in the listing: ask (without following links).
            let isFolder = type == UInt8(DT_DIR) || (type == UInt8(DT_UNKNOWN) && lstat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR)
            if isFolder {
                if let excluded, realPath(path) == excluded { continue }
                walk(path, relative: inner, excluding: excluded, file: file, undecodable: undecodable)
            } else if stat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG {
                file(path, inner)
            }
        }
    }

    /// `path` made absolute against the working directory, with `.` and `..` components resolved
    /// by name (symbolic links are left as they are).
    static func absolute(_ path: String) -> String {
        var parts: [Substring] = []
        let full = path.hasPrefix("/") ? path : (currentDirectory() + "/" + path)
        for part in full.split(separator: "/") {
            if part == "." { continue }
            if part == ".." { _ = parts.popLast(); continue }
            parts.append(part)
        }
        return "/" + parts.joined(separator: "/")
    }

    static func currentDirectory() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return "." }
        return String(nulTerminated: buffer)
    }

    /// The canonical path (`realpath`), or nil when it does not exist.
    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// `a/b/photo.png` → `a/b/photo.jpg` (a name without an extension gets one; a hidden-style
    /// name such as `.png` keeps its dot).
    static func outputName(_ relative: String) -> String {
        let name = Path.name(of: relative)
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return relative + ".jpg" }
        return String(relative.dropLast(name.distance(from: dot, to: name.endIndex))) + ".jpg"
    }

    /// Gives colliding outputs (`photo.png` and `photo.jpg`) distinct names: `photo.jpg`, `photo-2.jpg`.
    static func disambiguated(_ files: [InputFile]) -> [InputFile] {
        var taken = Set<String>()
        return files.map { file in
            var candidate = file.relativeOutput
            var n = 2
            while taken.contains(candidate.lowercased()) {
                candidate = String(file.relativeOutput.dropLast(4)) + "-\(n).jpg"
                n += 1
            }
            taken.insert(candidate.lowercased())
            return InputFile(path: file.path, relativeOutput: candidate)
        }
    }
}

package struct CommandFailure: Error, CustomStringConvertible {
    package var message: String
    package var description: String { message }
    package init(message: String) { self.message = message }
}
