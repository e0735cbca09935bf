#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import PhotoFiles
import PhotoPrep
#if canImport(Glibc)
import Glibc
#endif

/// One input photo and the path of its output relative to `--out`.
package struct InputFile: Sendable {
    package var path: String
    package var relativeOutput: String
}

/// Expands files and folders (recursively, symbolic links followed, hidden entries skipped as a shell's
/// `*` skips them) into input files, each with an output path that mirrors its place under the input
/// folder, with a `.jpg` extension. A file reached twice (named twice, or through a link) is one input.
package enum InputFiles {
    /// `skipped` hears of entries that cannot be inputs at all (names that are not UTF-8, which
    /// cannot be named in a report or a manifest): they are reported, never dropped silently. Throws when
    /// an output would land on an input (`--out` an input folder, its parent, or a single file's folder):
    /// originals are never written over.
    package static func expand(
        _ inputs: [String], excluding outputRoot: String, skipped: (String, String) -> Void = { _, _ in }
    ) throws -> [InputFile] {
        let excluded = fileID(outputRoot)
        var files: [InputFile] = []
        var seen = Set<FileID>()  // the input files, however they were reached
        var walked = Set<FileID>()  // the folders
        for input in inputs {
            guard let id = fileID(input) else { throw CommandFailure(message: "\(input): no such file or folder") }
            if !Path.isFolder(input) {
                if seen.insert(id).inserted { files.append(InputFile(path: input, relativeOutput: outputName(Path.name(of: input)))) }
                continue
            }
            let root = absolute(input)
            if id == excluded {
                throw CommandFailure(message: "\(input): --out is this input folder: the outputs would land among the originals (choose another folder; one inside it is not read)")
            }
            if fileID(outputRoot + "/" + Path.name(of: root)) == id {
                throw CommandFailure(message: "\(input): --out \(outputRoot) would write the outputs into this folder, over its originals (choose another folder)")
            }
            var found: [InputFile] = []
            var problem: String?
            walk(root, relative: "", excluding: excluded, walked: &walked) { path, id, relative in
                if seen.insert(id).inserted { found.append(InputFile(path: path, relativeOutput: Path.name(of: root) + "/" + outputName(relative))) }
            } undecodable: { folder, count in
                skipped(folder, "\(count) entr\(count == 1 ? "y" : "ies") whose name is not valid UTF-8 (rename to include)")
            } unreadable: { folder, reason in
                problem = problem ?? "\(folder): cannot read this folder of the input (\(reason)); nothing was prepared"
            } output: { folder in
                // --out inside this input folder is not read — so it must hold nothing of the input: only what runs
                // into it write (the mirror of this folder, the thumbnails, hidden files such as the manifest).
                let own = Set([Path.name(of: root), Thumbnail.folder])
                let others = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { !$0.hasPrefix(".") && !own.contains($0) }.sorted()
                if let first = others.first {
                    problem = problem ?? "\(folder): --out lies inside the input folder \(input) and holds \(others.count) entr\(others.count == 1 ? "y" : "ies") of its own (\(first)…), which would be left out of the run (choose an --out outside the inputs)"
                }
            }
            if let problem { throw CommandFailure(message: problem) }
            files += found.sorted { $0.path < $1.path }
        }
        let named = disambiguated(files)
        // An output path that names an existing input would replace it (an output that is not there yet cannot).
        for file in named {
            let output = outputRoot + "/" + file.relativeOutput
            if let target = fileID(output), seen.contains(target) {
                throw CommandFailure(message: "\(file.path): its output \(output) would replace an input (choose another --out)")
            }
        }
        return named
    }

    /// A file or folder by device and inode (links followed), as "device:inode": the same one reached by two paths is
    /// one. Text rather than a struct of the two numbers: the first set of a type of our own sends the Swift runtime
    /// through every protocol conformance record in the binary to find it Hashable, 0.7 M instructions a run.
    typealias FileID = String

    /// nil when nothing is at `path`.
    static func fileID(_ path: String) -> FileID? {
        FileIdentity(path: path).map { "\($0.device):\($0.inode)" }
    }

    static func fileID(_ status: stat) -> FileID { "\(status.st_dev):\(status.st_ino)" }

    /// Visits the regular files under `folder` (hidden entries skipped), each with its `FileID`. Symbolic
    /// links are followed, to files and to folders; a folder already `walked` is not walked again, so a link
    /// cannot make the walk loop. The output folder (`excluded`), when it lies inside, is not entered: `output` hears
    /// of it. A folder that cannot be listed is told to `unreadable` (never passed over in silence).
    static func walk(
        _ folder: String, relative: String, excluding excluded: FileID?, walked: inout Set<FileID>,
        file: (_ path: String, _ id: FileID, _ relative: String) -> Void, undecodable: (_ folder: String, _ count: Int) -> Void,
        unreadable: (_ folder: String, _ reason: String) -> Void, output: (_ folder: String) -> Void
    ) {
        guard let id = fileID(folder) else { return }
        if id == excluded {
            output(folder)
            return
        }
        guard walked.insert(id).inserted else { return }
        guard let dir = opendir(folder) else {
            unreadable(folder, String(cString: strerror(errno)))
            return
        }
        var names: [String] = []
        var count = 0
        while let entry = readdir(dir) {
            let bytes = withUnsafeBytes(of: entry.pointee.d_name) { raw in Array(raw.prefix { $0 != 0 }) }
            guard let name = String(validating: bytes, as: UTF8.self) else { count += 1; continue }
            if !name.hasPrefix(".") { names.append(name) }
        }
        closedir(dir)
        if count > 0 { undecodable(folder, count) }
        // In name order: which of two paths to one file is kept (the first) does not depend on the listing's order.
        for name in names.sorted() {
            let path = folder + "/" + name, inner = relative.isEmpty ? name : relative + "/" + name
            // What it is (through a link) and which file: one `stat`, whatever the listing said.
            var status = stat()
            guard stat(path, &status) == 0 else { continue }
            switch status.st_mode & S_IFMT {
            case S_IFDIR:
                walk(path, relative: inner, excluding: excluded, walked: &walked, file: file, undecodable: undecodable, unreadable: unreadable, output: output)
            case S_IFREG: file(path, fileID(status), inner)
            default: break
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

    /// `a/b/photo.png` → `a/b/photo.jpg` (a name without an extension gets one; a hidden-style
    /// name such as `.png` keeps its dot).
    static func outputName(_ relative: String) -> String {
        guard let ext = fileExtension(Path.name(of: relative)) else { return relative + ".jpg" }
        return String(relative.dropLast(ext.count + 1)) + ".jpg"
    }

    /// What follows the name's last dot (nil: none, or only a leading one, as in `.png`).
    static func fileExtension(_ name: String) -> Substring? {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        return name[name.index(after: dot)...]
    }

    /// Gives colliding outputs distinct names that do not depend on which other files are there: an input
    /// already named `.jpg` keeps its name; the others put their extension in it (`photo.png` and
    /// `photo.jpg` → `photo-png.jpg` and `photo.jpg`); what still collides gets `-2`, `-3`, in order.
    static func disambiguated(_ files: [InputFile]) -> [InputFile] {
        var files = files
        for indices in Dictionary(grouping: files.indices, by: { files[$0].relativeOutput.lowercased() }).values where indices.count > 1 {
            for i in indices {
                guard let ext = fileExtension(Path.name(of: files[i].path)), ext != "jpg" else { continue }
                files[i].relativeOutput = String(files[i].relativeOutput.dropLast(4)) + "-" + ext + ".jpg"
            }
        }
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

/// A command line that cannot work, found once the command runs (an input that is not there, an `--out`
/// that would write over the inputs): exit 2 with the message alone.
package struct UsageFailure: Error, CustomStringConvertible {
    package var message: String
    /// The command's usage line, when it helps.
    package var usage: String?
    package var description: String { message }
    package init(message: String, usage: String? = nil) {
        self.message = message
        self.usage = usage
    }
}
