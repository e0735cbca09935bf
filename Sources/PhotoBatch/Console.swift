#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import PhotoPrep
import Synchronization

/// How a batch talks to the person (or program) that started it.
final class Console: Sendable {
    enum Mode: Sendable {
        /// A terminal: one live progress line; problems printed above it.
        case live
        /// Not a terminal: one log line per file.
        case plain
        /// Only errors.
        case quiet
        /// One JSON object per file event on standard output, then a summary object.
        case json
    }

    struct Progress {
        var done = 0
        var bytesIn = 0
        var bytesOut = 0
        var lastDraw = ContinuousClock.now - .seconds(1)
    }

    let mode: Mode
    let total: Int
    let start = ContinuousClock.now
    private let progress = Mutex(Progress())

    init(mode: Mode, total: Int) {
        self.mode = mode
        self.total = total
    }

    static func mode(json: Bool, quiet: Bool) -> Mode {
        json ? .json : quiet ? .quiet : isatty(STDERR_FILENO) == 1 ? .live : .plain
    }

    /// Reports one finished input (called serially by the runner).
    func report(_ outcome: Outcome) {
        let (done, bytesIn, bytesOut, draw) = progress.withLock { p in
            p.done += 1
            switch outcome.status {
            case .prepared(let r), .unchanged(let r):
                p.bytesIn += r.sourceBytes
                p.bytesOut += r.outputBytes
            default: break
            }
            let now = ContinuousClock.now
            let draw = now - p.lastDraw > .milliseconds(100) || p.done == total
            if draw { p.lastDraw = now }
            return (p.done, p.bytesIn, p.bytesOut, draw)
        }
        switch mode {
        case .json:
            printJSONLine(Event(outcome))
        case .quiet:
            if case .failed(let reason) = outcome.status { printError("error: \(reason)") }
        case .plain:
            switch outcome.status {
            case .failed(let reason): printError("error: \(reason)")
            case .skipped(let reason): printError("skipped: \(reason)")
            default: print(line(for: outcome))
            }
        case .live:
            switch outcome.status {
            case .failed(let reason): clearLine(); printError("error: \(reason)")
            case .skipped(let reason): clearLine(); printError("skipped: \(reason)")
            case .prepared(let r) where !r.warnings.isEmpty:
                clearLine(); printError("warning: \(outcome.input): \(r.warnings.joined(separator: "; "))")
            default: break
            }
            if draw { drawProgress(done: done, bytesIn: bytesIn, bytesOut: bytesOut) }
        }
    }

    func finish(_ summary: BatchSummary) {
        switch mode {
        case .json:
            printJSONLine(Event(summary: summary))
        case .quiet:
            break
        case .live:
            clearLine()
            printError(summary.text)
        case .plain:
            print(summary.text)
        }
    }

    func line(for outcome: Outcome) -> String {
        switch outcome.status {
        case .prepared(let r):
            let how = r.quality.map {
                "Q\($0)" + (r.score.map { " SSIMULACRA2 \(cFormat("%.1f", $0))" } ?? "") + ", \(r.encodes) encode\(r.encodes == 1 ? "" : "s")"
            } ?? r.action.rawValue
            let warning = r.warnings.isEmpty ? "" : "  warning: " + r.warnings.joined(separator: "; ")
            return "\(outcome.input) → \(outcome.output)  \(r.sourceWidth)×\(r.sourceHeight) \(kib(r.sourceBytes)) → "
                + "\(r.outputWidth)×\(r.outputHeight) \(kib(r.outputBytes))  \(how), \(cFormat("%.0f ms", outcome.seconds * 1000))\(warning)"
                + (outcome.uploadedTo.map { "  uploaded → \($0)" } ?? "")
        case .unchanged:
            return "\(outcome.input) → \(outcome.output)  unchanged (already prepared with these settings)"
        case .present(let url):
            return "\(outcome.input) → \(url)  already there (uploaded from the same photo and settings)"
        case .skipped(let reason), .failed(let reason):
            return reason
        }
    }

    private func drawProgress(done: Int, bytesIn: Int, bytesOut: Int) {
        let elapsed = max(seconds(since: start), 0.001)
        let rate = Double(done) / elapsed
        let eta = rate > 0 ? Double(total - done) / rate : 0
        let text = "[\(done)/\(total)] \(megabytes(bytesIn)) → \(megabytes(bytesOut)) · \(cFormat("%.1f", rate)) photos/s · ETA \(Int(eta.rounded())) s"
        StandardStream.error.write("\r\u{1B}[2K\(text)")
    }

    private func clearLine() { StandardStream.error.write("\r\u{1B}[2K") }

    private func printError(_ text: String) { StandardStream.error.write(text + "\n") }

    /// One `--json` line.
    struct Event: Encodable {
        var event: String
        var input: String?
        var output: String?
        var seconds: Double?
        var report: PrepareReport?
        var uploadedTo: String?
        var reason: String?
        var summary: BatchSummary?

        init(_ outcome: Outcome) {
            input = outcome.input
            seconds = outcome.seconds
            uploadedTo = outcome.uploadedTo
            switch outcome.status {
            case .prepared(let r): event = "prepared"; output = outcome.output; report = r
            case .unchanged(let r): event = "unchanged"; output = outcome.output; report = r
            case .present(let url): event = "present"; output = url
            case .skipped(let why): event = "skipped"; reason = why
            case .failed(let why): event = "failed"; reason = why
            }
        }

        init(summary: BatchSummary) {
            event = "summary"
            self.summary = summary
        }
    }
}

package func kib(_ bytes: Int) -> String { cFormat("%.1f KiB", Double(bytes) / 1024) }
