import Foundation
import Testing
import TestSupport
@testable import PhotoBatch
import PhotoPrep

/// The manifest's lines, written by hand (`Manifest.Entry.jsonLine`), are the objects `JSONEncoder` writes, and read
/// back as the entries they were.
@Suite struct ManifestTests {
    /// A report from a real prepare, with awkward text put in where text goes.
    func entries() throws -> [Manifest.Entry] {
        let pipeline = PhotoPipeline(preset: .profile)
        let reencoded = try pipeline.prepare(contentsOf: Fixture.path("photos/storm-1920x1280.jpg")).report
        var filling = PrepareOptions(preset: .photo)
        filling.quality = .max
        var passed = try PhotoPipeline(options: filling).prepare(contentsOf: Fixture.path("orientation/landscape_1.jpg")).report
        #expect(reencoded.quality != nil && passed.quality == nil, "one entry with a quality, one without")
        passed.warnings = ["Premature end of JPEG file", "quote \" backslash \\ tab \t newline \n bell \u{7} nul \u{0}", "é 照片 🙂 \u{2028}"]
        passed.timings.decode = 1e-7
        passed.timings.total = 123456.789
        // Thumbnails with a WebP; square ones, and a capture time.
        var webp = PrepareOptions(preset: .photo)
        (webp.thumbnails, webp.webpThumbnails) = ([512, 128], true)
        let withWebP = try PhotoPipeline(options: webp).prepare(contentsOf: Fixture.path("photos/storm-1920x1280.jpg")).report
        #expect(withWebP.thumbnails?.contains { $0.webpBytes != nil } == true && withWebP.thumbnails?.contains { $0.webpBytes == nil } == true)
        var square = PrepareOptions(preset: .profile)
        (square.thumbnails, square.squareThumbnails) = ([128], true)
        let squared = try PhotoPipeline(options: square).prepare(contentsOf: Fixture.path("metadata/taken.jpg")).report
        #expect(squared.squareCrop != nil && squared.takenAt != nil)
        return [
            Manifest.Entry(output: "storm.jpg", sourceSHA256: Manifest.sha256([1, 2, 3]), settings: Manifest.settingsKey(PrepareOptions(preset: .profile)), report: reencoded),
            Manifest.Entry(output: "webp.jpg", sourceSHA256: "", settings: Manifest.settingsKey(webp), report: withWebP),
            Manifest.Entry(output: "square.jpg", sourceSHA256: "", settings: Manifest.settingsKey(square), report: squared),
            Manifest.Entry(output: "a \"b\"/c\\d é.jpg", sourceSHA256: "", settings: "v1;x=\u{1F}", report: passed),
        ]
    }

    @Test func linesAreTheObjectsJSONEncoderWrites() throws {
        for entry in try entries() {
            let line = entry.jsonLine
            #expect(!line.contains("\n"), "one line")
            let hand = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? NSDictionary
            let encoded = try JSONSerialization.jsonObject(with: JSONEncoder().encode(entry)) as? NSDictionary
            #expect(hand != nil && hand == encoded, "\(line)")
        }
    }

    @Test func linesReadBackAsTheEntries() throws {
        for entry in try entries() {
            let read = try JSONDecoder().decode(Manifest.Entry.self, from: Data(entry.jsonLine.utf8))
            #expect(read.output == entry.output && read.sourceSHA256 == entry.sourceSHA256 && read.settings == entry.settings)
            #expect(read.report == entry.report)
        }
    }

    /// A manifest written by `record` is read by the next run's `Manifest`, entry for entry.
    @Test func recordedEntriesAreReadByTheNextRun() throws {
        let folder = try temporaryFolder().path
        let written = try entries()
        let manifest = Manifest(folder: folder)
        for entry in written { try manifest.record(entry) }
        let lines = try String(contentsOfFile: manifest.path, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == written.count)
        let again = Manifest(folder: folder)
        for entry in written {
            try Data(repeating: 7, count: entry.report.outputBytes).write(to: URL(fileURLWithPath: folder + "/out.jpg"))
            #expect(again.upToDateReport(output: entry.output, outputPath: folder + "/out.jpg", sourceSHA256: entry.sourceSHA256, settings: entry.settings) == entry.report)
        }
    }
}
