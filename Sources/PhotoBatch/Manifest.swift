import Crypto
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import PhotoFiles
#if canImport(Glibc)
import Glibc
#endif
import PhotoPrep
import Synchronization

/// What a batch has already prepared under `--out`: one JSON line per output, appended (and
/// flushed to disk) after the output itself is in place. A re-run skips an input whose content hash
/// and settings match its entry while the output is still there with the recorded size.
final class Manifest: Sendable {
    struct Entry: Codable, Sendable {
        var output: String
        var sourceSHA256: String
        var settings: String
        var report: PrepareReport
    }

    static let fileName = ".photoprep-manifest.jsonl"
    let path: String
    private let entries: Mutex<[String: Entry]>

    init(folder: String) {
        path = Path.join(folder, Self.fileName)
        var loaded: [String: Entry] = [:]
        if let data = FileManager.default.contents(atPath: path) {
            // A line cut short by a killed process does not parse and is ignored.
            for line in data.split(separator: UInt8(ascii: "\n")) {
                if let entry = try? JSONDecoder().decode(Entry.self, from: Data(line)) { loaded[entry.output] = entry }
            }
        }
        entries = Mutex(loaded)
    }

    /// The recorded report when `output` was prepared from the same content with the same settings
    /// and is still on disk with the recorded size.
    func upToDateReport(output: String, outputPath: String, sourceSHA256: String, settings: String) -> PrepareReport? {
        guard let entry = entries.withLock({ $0[output] }), entry.sourceSHA256 == sourceSHA256, entry.settings == settings,
            Path.size(of: outputPath) == entry.report.outputBytes
        else { return nil }
        return entry.report
    }

    func record(_ entry: Entry) throws {
        var line = try JSONEncoder().encode(entry)
        line.append(UInt8(ascii: "\n"))
        try entries.withLock { entries in
            let fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0o644)
            guard fd >= 0 else { throw CommandFailure(message: "\(path): cannot open the manifest: \(String(cString: strerror(errno)))") }
            defer { close(fd) }
            let written = line.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            guard written == line.count, fsync(fd) == 0 else {
                throw CommandFailure(message: "\(path): cannot append to the manifest: \(String(cString: strerror(errno)))")
            }
            entries[entry.output] = entry
        }
    }

    static func sha256(_ bytes: [UInt8]) -> String {
        hex(SHA256.hash(data: bytes))
    }

    /// Everything that changes the output, as one string.
    static func settingsKey(_ o: PrepareOptions) -> String {
        let bg = hex([o.background.red, o.background.green, o.background.blue])
        return "v1;edge=\(o.maxEdge);bytes=\(o.maxBytes);q=\(o.qualities.lowerBound)-\(o.qualities.upperBound);bg=\(bg);"
            + "meta=\(o.metadata.rawValue);strict=\(o.strict);margin=\(o.shrinkOnLoadMargin);min=\(o.minimumEdge);"
            + "tol=\(o.budgetTolerance);pass=\(o.allowPassThrough);pixels=\(o.maxPixels)"
    }
}
