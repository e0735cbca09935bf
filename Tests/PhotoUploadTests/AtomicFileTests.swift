import Foundation
@testable import PhotoFiles
import Testing
import TestSupport

/// Files written whole or not at all, into folders made only when they are missing.
@Suite struct AtomicFileTests {
    @Test func missingFoldersAreMadeAndExistingOnesKept() throws {
        let root = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        let deep = root.appendingPathComponent("a/b/c/photo.jpg").path
        try AtomicFile.write([1, 2, 3], to: deep)
        #expect(FileManager.default.contents(atPath: deep) == Data([1, 2, 3]))
        // Beside a file already there, in a folder that exists: the old file is kept, the new one replaces its own name only.
        let beside = root.appendingPathComponent("a/b/c/other.jpg").path
        try AtomicFile.write([4], to: beside)
        try AtomicFile.write([5, 6], to: deep)
        #expect(FileManager.default.contents(atPath: deep) == Data([5, 6]))
        #expect(FileManager.default.contents(atPath: beside) == Data([4]))
        // Private files get private folders.
        let secret = root.appendingPathComponent("p/q/record.json").path
        try AtomicFile.write([7], to: secret, permissions: 0o600)
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: root.appendingPathComponent("p/q").path)[.posixPermissions] as? Int)
        #expect(mode == 0o700)
        // No temporary file is left anywhere.
        let left = try FileManager.default.subpathsOfDirectory(atPath: root.path).filter { $0.hasSuffix(AtomicFile.temporarySuffix) }
        #expect(left.isEmpty)
    }

    /// Any name the folder takes can be written, however long: the temporary file's name is cut (a 226-byte name made
    /// one of 259, over the 255 a name may have, and the error named that temporary file). A name too long for the
    /// folder itself is refused naming the file asked for.
    @Test func longNamesAreWrittenAndTheErrorNamesTheFile() throws {
        let root = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        for name in [String(repeating: "p", count: 251) + ".jpg", String(repeating: "é", count: 125) + ".jpg"] {
            let path = root.appendingPathComponent(name).path
            try AtomicFile.write([1, 2], to: path)
            #expect(FileManager.default.contents(atPath: path) == Data([1, 2]), "\(name.utf8.count) bytes")
        }
        let tooLong = root.appendingPathComponent(String(repeating: "q", count: 252) + ".jpg").path
        do {
            try AtomicFile.write([1], to: tooLong)
            Issue.record("a 256-byte name was written")
        } catch {
            #expect(error.message.hasPrefix(tooLong + ": cannot create") && error.lasts, "\(error.message)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: root.path).filter { $0.hasSuffix(AtomicFile.temporarySuffix) }.isEmpty)
    }

    @Test func aFileWhereAFolderShouldBeIsAClearError() throws {
        let root = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        let blocker = root.appendingPathComponent("taken").path
        try AtomicFile.write([1], to: blocker)
        #expect(Path.makeFolders(root.appendingPathComponent("taken/x/y").path) != nil)
        do {
            try AtomicFile.write([2], to: root.appendingPathComponent("taken/x/photo.jpg").path)
            Issue.record("written under a file")
        } catch {
            #expect(error.message.contains("taken/x"), "\(error.message)")
        }
        #expect(FileManager.default.contents(atPath: blocker) == Data([1]))
    }

    @Test func makeFoldersIsMkdirP() throws {
        let root = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        let path = root.appendingPathComponent("x/y/z").path
        #expect(Path.makeFolders(path) == nil)
        #expect(Path.isFolder(path))
        #expect(Path.makeFolders(path) == nil, "a folder that exists is fine")
        #expect(Path.makeFolders(root.path + "/x/y/z/") == nil, "so is a trailing slash")
        // Relative to the working folder, as `prepare --out` takes it.
        let relative = "photoprep-makefolders-\(getpid())/r/s"
        defer { try? FileManager.default.removeItem(atPath: "photoprep-makefolders-\(getpid())") }
        #expect(Path.makeFolders(relative) == nil)
        #expect(Path.isFolder(relative))
    }
}
