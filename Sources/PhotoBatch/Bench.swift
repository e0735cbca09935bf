package import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import PhotoFiles
#if canImport(Glibc)
import Glibc
#endif
@_spi(Benchmarks) import PhotoPrep

package struct Bench: ParsableCommand {
    package init() {}

    package static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Time the pipeline in-process, single-threaded, on photos: per photo time, bytes, quality, encodes.",
        discussion: "Each photo is read from disk and prepared --runs times; the median time is printed. Peak memory is the whole process's.")

    @Argument(help: "Photo files or folders.")
    var inputs: [String]

    @Option(help: "Runs per photo (the median is reported).")
    var runs = 3

    @OptionGroup var pipeline: PipelineOptions

    @Flag(help: "One JSON object per photo (file, seconds, report) instead of the table.")
    var json = false

    @Flag(help: "Time each stage separately: decode at every scale, resize, one encode, the budget search.")
    var stages = false

    @Option(help: ArgumentHelp(
        "Score what shrink-on-load costs at each of these margins (comma-separated, e.g. 1,1.5,2,3): SSIMULACRA2 of the photo decoded at the DCT scale the margin allows and resized, against the photo decoded whole and resized with Lanczos3, and the time of the decode and resize.",
        valueName: "margins"))
    var fidelity: String?

    @Flag(help: "Per photo, one JSON object: its score and bytes (baseline and progressive) at qualities 30 to 100, at 4:2:0 and 4:4:4, resized as prepare resizes it (what the quality target is calibrated on).")
    var curve = false

    @Option(help: "Also make thumbnails of these long edges (comma-separated, e.g. 128,256), as photoprep serve does on arrival.")
    var thumbnails: String?

    package func run() throws {
        let files = try InputFiles.expand(inputs, excluding: "/nonexistent")
        if stages { return try runStages(files) }
        if curve { return try runCurve(files) }
        if let fidelity { return try runFidelity(files, margins: fidelity.split(separator: ",").compactMap { Double($0) }) }
        var options = pipeline.options
        options.thumbnails = thumbnails.map { $0.split(separator: ",").compactMap { Int($0.filter { $0 != " " }) } } ?? []
        let preparer = PhotoPipeline(options: options)
        let budget = pipeline.options.maxBytes
        if !json { print("photoprep bench: long edge ≤ \(pipeline.options.maxEdge) px, < \(budget) bytes, \(runs) run(s) per photo, single-threaded, in-process")
        print(row("photo", "MP", "in KiB", "ms", "decode", "resize", "encode", "out", "out KiB", "Q", "enc", "scale")) }
        var times: [Double] = [], encodes: [(Int, Bool)] = [], failures = 0, skipped = 0
        for file in files {
            var samples: [(Double, PrepareReport)] = []
            do {
                for _ in 0..<max(runs, 1) {
                    let report = try preparer.prepare(contentsOf: file.path).report
                    samples.append((report.timings.total, report))
                }
            } catch {
                // As prepare counts them: what is not a photo is skipped, a photo that cannot be prepared failed.
                let notAPhoto = (error as? PhotoPrepError)?.kind == .unsupportedFormat
                if notAPhoto { skipped += 1 } else { failures += 1 }
                StandardStream.error.write("\(notAPhoto ? "skipped: " : "")\(Path.name(of: file.path)): \(error)\n")
                continue
            }
            let (time, r) = samples.sorted { $0.0 < $1.0 }[samples.count / 2]
            times.append(time)
            if json {
                printJSONLine(Line(file: file.path, seconds: time, report: r))
                continue
            }
            // The budget binds when the highest quality did not fit.
            encodes.append((r.encodes, r.quality.map { $0 < pipeline.maxQuality } ?? false))
            print(row(
                Path.name(of: file.path),
                cFormat("%.1f", Double(r.sourceWidth * r.sourceHeight) / 1e6),
                String(r.sourceBytes / 1024), cFormat("%.1f", time * 1000),
                cFormat("%.1f", r.timings.decode * 1000), cFormat("%.1f", r.timings.resize * 1000),
                cFormat("%.1f", r.timings.encode * 1000), "\(r.outputWidth)×\(r.outputHeight)",
                String(r.outputBytes / 1024), r.quality.map(String.init) ?? "pass", String(r.encodes), "1/\(r.decodeScale)"))
        }
        guard !times.isEmpty, !json else { return }
        let binding = encodes.filter(\.1).map(\.0), free = encodes.filter { !$0.1 }.map(\.0)
        func mean(_ xs: [Int]) -> String { xs.isEmpty ? "–" : cFormat("%.2f", Double(xs.reduce(0, +)) / Double(xs.count)) }
        print("""
            photos: \(times.count) prepared, \(skipped) skipped (not photos), \(failures) failed
            median time per photo: \(cFormat("%.1f", median(times) * 1000)) ms (mean \(cFormat("%.1f", times.reduce(0, +) / Double(times.count) * 1000)) ms)
            encodes per photo: \(mean(binding)) where the budget binds (\(binding.count) photos), \(mean(free)) where it does not (\(free.count))
            peak memory (whole process, VmHWM): \(peakResidentMegabytes()) MB
            """)
    }

    func runStages(_ files: [InputFile]) throws {
        print("photoprep bench --stages: median of \(runs) run(s), single-threaded, in-process")
        for file in files {
            guard let data = FileManager.default.contents(atPath: file.path) else { continue }
            do {
                let timings = try StageTimings.measure([UInt8](data), options: pipeline.options, runs: runs)
                print(Path.name(of: file.path))
                for (stage, seconds) in timings { print("  \(stage + String(repeating: " ", count: max(0, 40 - stage.count))) \(cFormat("%8.2f ms", seconds * 1000))") }
            } catch {
                StandardStream.error.write("\(Path.name(of: file.path)): \(error)\n")
            }
        }
    }

    func runCurve(_ files: [InputFile]) throws {
        struct Line: Encodable {
            var file: String
            var width: Int
            var height: Int
            var points: [QualityCurve.Point]
        }
        for file in files {
            guard let data = FileManager.default.contents(atPath: file.path) else { continue }
            do {
                let curve = try QualityCurve.measure([UInt8](data), options: pipeline.options, qualities: Array(stride(from: 30, through: 100, by: 2)))
                printJSONLine(Line(file: Path.name(of: file.path), width: curve.width, height: curve.height, points: curve.points))
            } catch {
                StandardStream.error.write("\(Path.name(of: file.path)): \(error)\n")
            }
        }
    }

    func runFidelity(_ files: [InputFile], margins: [Double]) throws {
        print("photoprep bench --fidelity: long edge ≤ \(pipeline.options.maxEdge) px; per margin: DCT scale, SSIMULACRA2 against the whole decode's Lanczos3 resize, ms to decode and resize")
        print(([("photo", 28)] + margins.map { ("margin \(cFormat("%g", $0))", 22) }).map { text, width in
            text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
        }.joined(separator: " "))
        for file in files {
            guard let data = FileManager.default.contents(atPath: file.path) else { continue }
            do {
                let rows = try ResizeFidelity.measure([UInt8](data), options: pipeline.options, margins: margins)
                let cells = rows.map { cFormat("1/%d %6.2f %6.1f ms", $0.scale, $0.score, $0.seconds * 1000) }
                print(([String(Path.name(of: file.path).prefix(28))] + cells).map { text in
                    String(repeating: " ", count: max(0, (text == cells.first || cells.contains(text) ? 22 : 28) - text.count)) + text
                }.joined(separator: " "))
            } catch {
                StandardStream.error.write("\(Path.name(of: file.path)): \(error)\n")
            }
        }
    }

    struct Line: Encodable {
        var file: String
        var seconds: Double
        var report: PrepareReport
    }

    func row(_ columns: String...) -> String {
        let widths = [28, 5, 7, 7, 7, 7, 7, 10, 8, 4, 4, 5]
        return zip(columns, widths).map { text, width in
            text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
        }.joined(separator: " ")
    }
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

/// The process's peak resident set size, in MB: `VmHWM` from `/proc/self/status`, the peak of this program's own
/// memory. (`getrusage`'s `ru_maxrss` also counts what the parent held when it spawned this process: Linux records
/// the parent's peak at `exec` when the child was made by `vfork`, as `posix_spawn` does.)
func peakResidentMegabytes() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),  // as UsableCores reads it
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
        let kib = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
    else {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Int(usage.ru_maxrss) * 1024 / 1_000_000
    }
    return kib * 1024 / 1_000_000
}

