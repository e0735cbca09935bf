import ArgumentParser
import Foundation
import Testing
import TestSupport
@testable import PhotoBatch
import PhotoPrep

/// `PrepareCommandLine`, the reader `photoprep prepare` uses before argument parser: what it reads, argument parser
/// reads the same (`PrepareArguments`, the command's own options); what it declines is left to argument parser.
@Suite struct PrepareCommandLineTests {
    /// Argument parser's reading of `prepare …`, or nil where it refuses the command line.
    func parsed(_ arguments: [String]) -> PrepareSettings? {
        (try? PrepareArguments.parse(Array(arguments.dropFirst())))?.settings
    }

    @Test func readsWhatArgumentParserReadsTheSame() throws {
        let lines: [[String]] = [
            ["prepare", "a.jpg", "--out", "out"],
            ["prepare", "a.jpg", "b dir/", "-o", "out", "-q", "-j", "1"],
            ["prepare", "--out=out", "a.jpg", "--preset", "profile", "--jobs=3"],
            ["prepare", "-o", "o", "x.png", "--json", "--force", "--report", "r.csv", "--shard", "2/3"],
            ["prepare", "p", "--out", "o", "--preset=photo", "--max-edge", "1600", "--max-bytes", "800KB", "--max-quality", "90"],
            ["prepare", "p", "--out", "o", "--background", "#1a2B3c", "--strip-all", "--shrink-margin", "2.5", "--strict"],
            ["prepare", "p", "--out", "o", "--max-memory", "64MiB", "--decoding-threads", "1", "--max-bytes=1.5MB"],
            ["prepare", "p", "q", "--out", "o", "r", "--background=ffffff", "--max-edge=16"],
            ["prepare", "p", "--out", "o", "--thumbnails", "256,128", "--preset", "photo"],
            ["prepare", "p", "--out", "o", "--thumbnails", "128", "--square-thumbnails", "--focus=-0.5,0.25", "--webp-thumbnails"],
        ]
        for line in lines {
            let read = try #require(PrepareCommandLine.read(line), "declined: \(line)")
            #expect(read == parsed(line), "\(line)")
        }
        // Each option's value reaches its setting (so equality above is not two readers both leaving defaults).
        let read = try #require(PrepareCommandLine.read(lines[5]))
        #expect(read.pipeline.options.background == .init(red: 0x1a, green: 0x2b, blue: 0x3c))
        #expect(read.pipeline.options.metadata == .none && read.pipeline.options.strict)
        #expect(read.pipeline.options.shrinkOnLoadMargin == 2.5)
        let sizes = try #require(PrepareCommandLine.read(lines[4]))
        #expect(sizes.pipeline.options.maxEdge == 1600 && sizes.pipeline.options.maxBytes == 800_000)
        #expect(sizes.pipeline.options.qualities.upperBound == 90)
        #expect(try #require(PrepareCommandLine.read(lines[8])).thumbnails == [256, 128])
        let square = try #require(PrepareCommandLine.read(lines[9]))
        #expect(square.squareThumbnails && square.webpThumbnails && square.focus == FocalPoint(x: -0.5, y: 0.25))
    }

    /// Help, errors, `--upload` and anything unusual stay argument parser's, with its messages.
    @Test func declinesWhatItIsNotSureOf() {
        let lines: [[String]] = [
            ["prepare", "--help"], ["prepare", "-h"], ["--version"], ["probe", "a.jpg"], ["prepare"],
            ["prepare", "a.jpg"],  // no --out
            ["prepare", "--out", "o"],  // no input
            ["prepare", "a.jpg", "--out", "o", "--upload", "file:///tmp/x"],
            ["prepare", "a.jpg", "--out", "o", "--out", "p"],  // repeated
            ["prepare", "a.jpg", "--out"],  // no value
            ["prepare", "a.jpg", "--out", "-q"],  // an option where a value belongs
            ["prepare", "a.jpg", "--out="],
            ["prepare", "a.jpg", "--out", "o", "--jobs", "0"],  // fails validation
            ["prepare", "a.jpg", "--out", "o", "--jobs", "two"],
            ["prepare", "a.jpg", "--out", "o", "--preset", "poster"],
            ["prepare", "a.jpg", "--out", "o", "--max-edge", "8"],
            ["prepare", "a.jpg", "--out", "o", "--max-quality", "101"],
            ["prepare", "a.jpg", "--out", "o", "--quiet", "--json"],
            ["prepare", "a.jpg", "--out", "o", "--shard", "4/3"],
            ["prepare", "a.jpg", "--out", "o", "--background", "red"],
            ["prepare", "a.jpg", "--out", "o", "--quiet=yes"],
            ["prepare", "a.jpg", "--out", "o", "-qj", "2"],
            ["prepare", "a.jpg", "--out", "o", "--", "-b.jpg"],
            ["prepare", "-", "--out", "o"],
            ["prepare", "a.jpg", "--out", "o", "--thumbnails", "8"],  // below 16 px
            ["prepare", "a.jpg", "--out", "o", "--thumbnails", "128,128"],
            ["prepare", "a.jpg", "--out", "o", "--thumbnails", "128,"],
            ["prepare", "a.jpg", "--out", "o", "--thumbnails", "big"],
        ]
        for line in lines {
            #expect(PrepareCommandLine.read(line) == nil, "read: \(line)")
        }
    }

    /// Every option `prepare`'s help lists is one the reader knows, bar `--upload`'s own.
    @Test func knowsEveryOptionOfPrepareArguments() {
        let help = PrepareArguments.helpMessage(columns: 1000)
        var named = Set<String>()
        for line in help.split(separator: "\n") {
            guard let option = line.firstMatch(of: /^\s+(?:(-[a-z]), )?(--[a-z][a-z-]*)/) else { continue }
            named.insert(String(option.output.2))
            if let short = option.output.1 { named.insert(String(short)) }
        }
        #expect(named.count > 10, "\(help)")
        #expect(named.subtracting(["-h", "--help"]) == PrepareCommandLine.names, "\(help)")
    }
}
