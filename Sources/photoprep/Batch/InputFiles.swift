import Foundation

/// One input photo and the path of its output relative to `--out`.
struct InputFile {
    var path: String
    var relativeOutput: String
}

/// Expands files and folders (recursively, hidden files skipped) into input files, each with an output
/// path that mirrors its place under the input folder, with a `.jpg` extension.
enum InputFiles {
    /// `skipped` hears of entries that cannot be inputs at all (names that are not UTF-8, which the
    /// folder walk cannot name): they are reported, never dropped silently.
    static func expand(
        _ inputs: [String], excluding outputRoot: String, skipped: (String, String) -> Void = { _, _ in }
    ) throws -> [InputFile] {
        let manager = FileManager.default
        let excluded = URL(fileURLWithPath: outputRoot).standardizedFileURL.resolvingSymlinksInPath().path
        var files: [InputFile] = []
        for input in inputs {
            var isDirectory: ObjCBool = false
            guard manager.fileExists(atPath: input, isDirectory: &isDirectory) else {
                throw CommandFailure(message: "\(input): no such file or folder")
            }
            if !isDirectory.boolValue {
                files.append(InputFile(path: input, relativeOutput: outputName(URL(fileURLWithPath: input).lastPathComponent)))
                continue
            }
            let root = URL(fileURLWithPath: input).standardizedFileURL
            guard let walker = manager.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey], options: [.skipsHiddenFiles]) else { continue }
            var found: [InputFile] = []
            for case let url as URL in walker {
                // Symbolic links are followed: what counts is the file they point at.
                let resolved = url.resolvingSymlinksInPath()
                if resolved.path == excluded { walker.skipDescendants(); continue }
                guard (try? resolved.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true else { continue }
                let relative = String(url.standardizedFileURL.path.dropFirst(root.path.count + 1))
                found.append(InputFile(path: url.path, relativeOutput: root.lastPathComponent + "/" + outputName(relative)))
            }
            files += found.sorted { $0.path < $1.path }
            for (folder, count) in undecodableNames(under: root.path) {
                skipped(folder, "\(count) entr\(count == 1 ? "y" : "ies") whose name is not valid UTF-8 (rename to include)")
            }
        }
        return disambiguated(files)
    }

    /// Folders under `root` holding entries whose names are not UTF-8, with how many: Foundation's
    /// walk passes them over, so they are counted here with `readdir`, which sees the raw bytes.
    static func undecodableNames(under root: String) -> [(String, Int)] {
        var found: [(String, Int)] = []
        var pending = [root]
        while let folder = pending.popLast() {
            guard let dir = opendir(folder) else { continue }
            defer { closedir(dir) }
            var count = 0
            while let entry = readdir(dir) {
                let bytes = withUnsafeBytes(of: entry.pointee.d_name) { raw in Array(raw.prefix { $0 != 0 }) }
                guard let name = String(validating: bytes, as: UTF8.self) else { count += 1; continue }
                if name.hasPrefix(".") { continue }
                if entry.pointee.d_type == UInt8(DT_DIR) { pending.append(folder + "/" + name) }
            }
            if count > 0 { found.append((folder, count)) }
        }
        return found.sorted { $0.0 < $1.0 }
    }

    /// `a/b/photo.png` → `a/b/photo.jpg`.
    static func outputName(_ relative: String) -> String {
        let url = URL(fileURLWithPath: relative, relativeTo: URL(fileURLWithPath: "/"))
        let stem = url.deletingPathExtension().relativePath
        return (stem.isEmpty ? relative : stem) + ".jpg"
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

struct CommandFailure: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
