#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import PhotoFiles
import PhotoPrep

/// The end-of-batch figures.
struct BatchSummary: Codable {
    var total = 0
    var prepared = 0
    var unchanged = 0
    var skipped = 0
    var failed = 0
    /// Inputs not started because the run was interrupted.
    var remaining = 0
    var interrupted = false
    /// Source and output bytes of the prepared and unchanged photos.
    var bytesIn = 0
    var bytesOut = 0
    var medianQuality: Int?
    var medianScore: Double?
    var medianSecondsPerPhoto: Double?
    var slowest: String?
    var slowestSeconds: Double?
    var wallSeconds = 0.0

    init(outcomes: [Outcome], total: Int, wallSeconds: Double, interrupted: Bool) {
        self.total = total
        self.wallSeconds = wallSeconds
        self.interrupted = interrupted
        var qualities: [Int] = [], scores: [Double] = [], times: [Double] = []
        for outcome in outcomes {
            switch outcome.status {
            case .prepared(let r):
                prepared += 1
                bytesIn += r.sourceBytes
                bytesOut += r.outputBytes
                if let q = r.quality { qualities.append(q) }
                if let score = r.score { scores.append(score) }
                times.append(outcome.seconds)
                if outcome.seconds > (slowestSeconds ?? -1) {
                    slowest = outcome.input
                    slowestSeconds = outcome.seconds
                }
            case .unchanged(let r):
                unchanged += 1
                bytesIn += r.sourceBytes
                bytesOut += r.outputBytes
            case .present:
                unchanged += 1
                bytesIn += outcome.sourceBytes
            case .skipped: skipped += 1
            case .failed: failed += 1
            }
        }
        remaining = total - outcomes.count
        medianQuality = qualities.isEmpty ? nil : qualities.sorted()[qualities.count / 2]
        medianScore = scores.isEmpty ? nil : median(scores)
        medianSecondsPerPhoto = times.isEmpty ? nil : median(times)
    }

    var text: String {
        var lines = ["\(prepared) prepared, \(unchanged) unchanged, \(skipped) skipped, \(failed) failed"
            + (remaining > 0 ? ", \(remaining) not started (interrupted: re-run the same command to finish)" : "")
            + " — \(total) input(s) in \(cFormat("%.1f", wallSeconds)) s"]
        if bytesIn > 0 {
            lines.append("bytes: \(megabytes(bytesIn)) → \(megabytes(bytesOut))")
        }
        if let medianSecondsPerPhoto {
            let quality = medianQuality.map { "median quality \($0), " } ?? ""
                + (medianScore.map { "median SSIMULACRA2 \(cFormat("%.1f", $0)), " } ?? "")
            lines.append("\(quality)median \(cFormat("%.0f", medianSecondsPerPhoto * 1000)) ms per photo; slowest \(slowest ?? "") (\(cFormat("%.0f", (slowestSeconds ?? 0) * 1000)) ms)")
        }
        return lines.joined(separator: "\n")
    }
}

package func megabytes(_ bytes: Int) -> String { cFormat("%.1f MB", Double(bytes) / 1e6) }

/// One row of `--report`: one input, whatever happened to it.
struct ReportRow: Codable {
    var status: String
    var source: String
    var output: String?
    var sourceFormat: String?
    var sourceWidth: Int?
    var sourceHeight: Int?
    var sourceBytes: Int
    var outputWidth: Int?
    var outputHeight: Int?
    var outputBytes: Int?
    var quality: Int?
    var score: Double?
    var encodes: Int?
    /// The output's placeholder (`PrepareReport.placeholder`) and the capture time its source's EXIF gave.
    var placeholder: String?
    var takenAt: String?
    var seconds: Double
    var warning: String?
    var error: String?

    init(_ outcome: Outcome) {
        source = outcome.input
        sourceBytes = outcome.sourceBytes
        seconds = outcome.seconds
        switch outcome.status {
        case .prepared(let r), .unchanged(let r):
            if case .prepared = outcome.status { status = "prepared" } else { status = "unchanged" }
            output = outcome.output
            sourceFormat = r.sourceFormat.rawValue
            sourceWidth = r.sourceWidth
            sourceHeight = r.sourceHeight
            outputWidth = r.outputWidth
            outputHeight = r.outputHeight
            outputBytes = r.outputBytes
            quality = r.quality
            score = r.score
            encodes = r.encodes
            placeholder = r.placeholder
            takenAt = r.takenAt
            warning = r.warnings.isEmpty ? nil : r.warnings.joined(separator: "; ")
        case .present(let url):
            status = "present"
            output = url
        case .skipped(let reason):
            status = "skipped"
            error = reason
        case .failed(let reason):
            status = "failed"
            error = reason
        }
    }

    static let csvHeader = "status,source,output,source_format,source_width,source_height,source_bytes,output_width,output_height,output_bytes,quality,score,encodes,placeholder,taken_at,seconds,warning,error"

    var csv: String {
        func field(_ value: (any CustomStringConvertible)?) -> String {
            guard let text = value?.description else { return "" }
            guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" }) else { return text }
            return "\"" + text.replacing("\"", with: "\"\"") + "\""
        }
        let values: [(any CustomStringConvertible)?] = [
            status, source, output, sourceFormat, sourceWidth, sourceHeight, sourceBytes, outputWidth, outputHeight,
            outputBytes, quality, score, encodes, placeholder, takenAt, cFormat("%.4f", seconds), warning, error,
        ]
        return values.map(field).joined(separator: ",")
    }

    /// Writes the rows as CSV (`.csv`) or JSON (anything else), atomically.
    static func write(_ rows: [ReportRow], to path: String) throws {
        let bytes: [UInt8]
        if path.lowercased().hasSuffix(".csv") {
            bytes = Array((([csvHeader] + rows.map(\.csv)).joined(separator: "\n") + "\n").utf8)
        } else {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            bytes = [UInt8](try encoder.encode(rows))
        }
        try AtomicFile.write(bytes, to: path)
    }
}
