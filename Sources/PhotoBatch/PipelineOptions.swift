public import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
public import PhotoPrep

/// The pipeline's settings as plain values, with their defaults: what `PipelineOptions` parses and what
/// `PrepareCommandLine` reads.
package struct PipelineSettings: Equatable, Sendable {
    var preset: PrepareOptions.Preset = .group
    var maxEdge: Int?
    var maxBytes: ByteSize?
    var quality: QualityTarget = PrepareOptions(preset: .group).quality
    var maxQuality = 100
    var background = HexColor(color: .white)
    var stripAll = false
    var shrinkMargin = PrepareOptions(preset: .group).shrinkOnLoadMargin
    var strict = false
    var maxMemory = ByteSize(bytes: PrepareOptions(preset: .group).maxMemory)
    var decodingThreads = PrepareOptions.processors

    package init() {}

    func validate() throws {
        if decodingThreads < 1 { throw ValidationError("--decoding-threads must be at least 1") }
        if let maxEdge, maxEdge < 16 { throw ValidationError("--max-edge must be at least 16") }
        if !(1...100).contains(maxQuality) { throw ValidationError("--max-quality must be 1…100") }
        if shrinkMargin < 1 { throw ValidationError("--shrink-margin must be at least 1") }
    }

    package var options: PrepareOptions {
        var options = PrepareOptions(preset: preset)
        if let maxEdge { options.maxEdge = maxEdge }
        if let maxBytes { options.maxBytes = maxBytes.bytes }
        options.quality = quality
        options.qualities = min(options.qualities.lowerBound, maxQuality)...maxQuality
        options.metadata = stripAll ? .none : .colorProfileOnly
        options.strict = strict
        options.maxMemory = maxMemory.bytes
        options.background = background.color
        options.shrinkOnLoadMargin = shrinkMargin
        options.decodingThreads = decodingThreads
        return options
    }
}

/// The pipeline options every command shares (their defaults are `PipelineSettings`').
package struct PipelineOptions: ParsableArguments {
    package init() {}
    private static let defaults = PipelineSettings()

    @Option(help: "Target preset: profile (1024 px, < 500 KiB), group (2048 px, < 500 KiB), photo (2048 px, < 5 MiB).")
    var preset: PrepareOptions.Preset = defaults.preset

    @Option(help: "Long edge in pixels (overrides the preset's).")
    var maxEdge: Int?

    @Option(help: "Byte budget, e.g. 500KiB, 5MiB, 800KB (overrides the preset's). The output is strictly smaller.")
    var maxBytes: ByteSize?

    @Option(help: ArgumentHelp(
        "What the JPEG quality is chosen for: good (SSIMULACRA2 75), high (85: looks the same in a flip test), visually-lossless (90), score:N, a fixed libjpeg quality 1-100, or max (the highest under the byte budget). The byte budget always wins.",
        valueName: "target"))
    var quality: QualityTarget = defaults.quality

    @Option(help: "Highest JPEG quality the encoder may choose.")
    var maxQuality: Int = defaults.maxQuality

    @Option(help: "Colour that transparency is flattened onto, as RRGGBB.")
    var background: HexColor = defaults.background

    @Flag(help: "Strip everything, the ICC colour profile too (EXIF, GPS, XMP, IPTC and comments always go).")
    var stripAll = defaults.stripAll

    @Option(help: "Shrink-on-load margin: JPEGs decode at 1/2, 1/4 or 1/8 while that leaves this many times the output size.")
    var shrinkMargin: Double = defaults.shrinkMargin

    @Flag(help: "Treat decoder warnings (e.g. a truncated JPEG) as errors.")
    var strict = defaults.strict

    @Option(help: "Refuse a photo whose decode would hold more than this (estimated from its header; progressive JPEGs hold every coefficient, PNGs the whole image). Per photo: --jobs N may use N times as much.")
    var maxMemory: ByteSize = defaults.maxMemory

    @Option(help: "Threads a HEIC's grid of tiles may decode on (iPhones tile a photo into 512 × 512 pieces; default: the number of cores). With --jobs above 1, 1 keeps the cores for the other photos.")
    var decodingThreads: Int = defaults.decodingThreads

    package func validate() throws { try settings.validate() }

    package var settings: PipelineSettings {
        var settings = PipelineSettings()
        settings.preset = preset
        settings.maxEdge = maxEdge
        settings.maxBytes = maxBytes
        settings.quality = quality
        settings.maxQuality = maxQuality
        settings.background = background
        settings.stripAll = stripAll
        settings.shrinkMargin = shrinkMargin
        settings.strict = strict
        settings.maxMemory = maxMemory
        settings.decodingThreads = decodingThreads
        return settings
    }

    package var options: PrepareOptions { settings.options }
}

extension PrepareOptions.Preset: ExpressibleByArgument {}

extension FocalPoint: ExpressibleByArgument {
    public init?(argument: String) { self.init(parsing: argument) }
}

extension QualityTarget: ExpressibleByArgument {
    public init?(argument: String) { self.init(argument) }
    public var defaultValueDescription: String { description }
}

/// A byte count written as `500KiB`, `5MiB`, `800KB`, `1.5MB` or plain bytes.
package struct ByteSize: ExpressibleByArgument, Equatable, Sendable {
    package var bytes: Int

    package init(bytes: Int) { self.bytes = bytes }

    package init?(argument: String) {
        let units: [(suffix: String, factor: Double)] = [
            ("KiB", 1024), ("MiB", 1024 * 1024), ("GiB", 1024 * 1024 * 1024),
            ("KB", 1000), ("MB", 1_000_000), ("GB", 1_000_000_000), ("K", 1024), ("M", 1024 * 1024), ("B", 1),
        ]
        let text = argument.trimmed
        let unit = units.first { text.lowercased().hasSuffix($0.suffix.lowercased()) } ?? ("", 1)
        guard let number = Double(String(text.dropLast(unit.suffix.count)).trimmed),
            number > 0, number * unit.factor < Double(Int.max)
        else { return nil }
        bytes = Int(number * unit.factor)
    }

    /// How help texts show a default: `8 MiB`, `500 KiB`, `800 KB`, else bytes.
    package var defaultValueDescription: String {
        for (factor, unit) in [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB"), (1_000_000, "MB"), (1000, "KB")]
        where bytes >= factor && bytes % factor == 0 {
            return "\(bytes / factor) \(unit)"
        }
        return "\(bytes) bytes"
    }
}

/// An sRGB colour written as `RRGGBB` (a leading `#` is allowed).
struct HexColor: ExpressibleByArgument, Equatable, Sendable {
    var color: RGBColor

    init(color: RGBColor) { self.color = color }

    package init?(argument: String) {
        let hex = argument.hasPrefix("#") ? String(argument.dropFirst()) : argument
        guard hex.count == 6, let value = UInt32(hex, radix: 16) else { return nil }
        color = RGBColor(red: UInt8(value >> 16), green: UInt8((value >> 8) & 0xFF), blue: UInt8(value & 0xFF))
    }

    package var defaultValueDescription: String {
        cFormat("%02X%02X%02X", color.red, color.green, color.blue)
    }
}

extension String {
    /// Without leading and trailing spaces and tabs.
    var trimmed: String {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        return String(drop(while: blank).reversed().drop(while: blank).reversed())
    }
}
