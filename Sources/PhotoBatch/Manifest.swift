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
        let line = Array((entry.jsonLine + "\n").utf8)
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
        return "v3;edge=\(o.maxEdge);bytes=\(o.maxBytes);target=\(o.quality.key);q=\(o.qualities.lowerBound)-\(o.qualities.upperBound);bg=\(bg);"
            + "meta=\(o.metadata.rawValue);strict=\(o.strict);margin=\(o.shrinkOnLoadMargin);min=\(o.minimumEdge);"
            + "tol=\(o.budgetTolerance);pass=\(o.allowPassThrough);pixels=\(o.maxPixels);progressive=\(o.progressive)"
            + (o.thumbnails.isEmpty ? "" : ";thumbs=\(o.thumbnails.map(String.init).joined(separator: ","))")
            + (o.webpThumbnails ? ";webp" : "") + (o.squareThumbnails ? ";square" : "") + (o.focus.map { ";focus=\($0)" } ?? "")
    }
}

extension Manifest.Entry {
    /// The entry as one line of JSON, the object `JSONEncoder` writes (its fields in declaration order), written here:
    /// `JSONEncoder` makes the runtime look up each of the three types' coding keys through every protocol conformance
    /// record in the binary, 1.9 M instructions a `prepare` — a tenth of one for a small photo. Read back by
    /// `JSONDecoder` (a re-run); `ManifestTests` holds the two equal.
    var jsonLine: String {
        let r = report, t = report.timings
        let timings = JSONObject()
            .number("decode", t.decode).number("resize", t.resize).number("orient", t.orient).number("encode", t.encode)
            .number("placeholder", t.placeholder).number("thumbnails", t.thumbnails).number("webp", t.webp)
            .number("squareCrop", t.squareCrop).number("total", t.total)
        var written = JSONObject()
            .string("sourceFormat", r.sourceFormat.rawValue).number("sourceWidth", r.sourceWidth)
            .number("sourceHeight", r.sourceHeight).number("sourceBytes", r.sourceBytes)
            .number("sourceOrientation", r.sourceOrientation).bool("sourceHasGPS", r.sourceHasGPS)
            .number("outputWidth", r.outputWidth).number("outputHeight", r.outputHeight).number("outputBytes", r.outputBytes)
            .string("action", r.action.rawValue)
        if let quality = r.quality { written = written.number("quality", quality) }
        if let score = r.score { written = written.number("score", score) }
        if let target = r.target { written = written.string("target", target) }
        if let missed = r.missedTarget { written = written.bool("missedTarget", missed) }
        if let chroma = r.chroma { written = written.string("chroma", chroma) }
        if let progressive = r.progressive { written = written.bool("progressive", progressive) }
        written = written.number("encodes", r.encodes).number("decodeScale", r.decodeScale)
            .bool("keptColorProfile", r.keptColorProfile).strings("warnings", r.warnings).object("timings", timings)
        if let placeholder = r.placeholder { written = written.string("placeholder", placeholder) }
        if let thumbnails = r.thumbnails {
            written = written.objects("thumbnails", thumbnails.map { t in
                var object = JSONObject().number("edge", t.edge).number("width", t.width).number("height", t.height).number("bytes", t.bytes)
                if let score = t.score { object = object.number("score", score) }
                if let bytes = t.webpBytes { object = object.number("webpBytes", bytes) }
                if let quality = t.webpQuality { object = object.number("webpQuality", quality) }
                if let score = t.webpScore { object = object.number("webpScore", score) }
                return object
            })
        }
        if let takenAt = r.takenAt { written = written.string("takenAt", takenAt) }
        if let crop = r.squareCrop {
            written = written.object("squareCrop", JSONObject().number("x", crop.x).number("y", crop.y).string("rule", crop.rule.rawValue))
        }
        return JSONObject()
            .string("output", output).string("sourceSHA256", sourceSHA256).string("settings", settings)
            .object("report", written).text + "}"
    }
}

/// A JSON object written field by field; `text` lacks the closing brace.
struct JSONObject {
    private(set) var text = "{"

    func string(_ name: String, _ value: String) -> JSONObject { adding(name, Self.quoted(value)) }
    func number(_ name: String, _ value: Int) -> JSONObject { adding(name, String(value)) }
    /// Swift's shortest text that reads back as the same `Double`; JSON has no infinity or NaN (`JSONEncoder` throws).
    func number(_ name: String, _ value: Double) -> JSONObject { adding(name, value.isFinite ? "\(value)" : "0") }
    func bool(_ name: String, _ value: Bool) -> JSONObject { adding(name, value ? "true" : "false") }
    func strings(_ name: String, _ values: [String]) -> JSONObject {
        var list = "["
        for value in values { list += (list.utf8.count > 1 ? "," : "") + Self.quoted(value) }
        return adding(name, list + "]")
    }
    func object(_ name: String, _ value: JSONObject) -> JSONObject { adding(name, value.text + "}") }
    func objects(_ name: String, _ values: [JSONObject]) -> JSONObject { adding(name, "[" + values.map { $0.text + "}" }.joined(separator: ",") + "]") }

    private func adding(_ name: String, _ value: String) -> JSONObject {
        var object = self
        object.text += (text.utf8.count > 1 ? "," : "") + Self.quoted(name) + ":" + value
        return object
    }

    /// `value` in quotes, with quotes, backslashes and control characters escaped (everything else as UTF-8).
    static func quoted(_ value: String) -> String {
        var out = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
