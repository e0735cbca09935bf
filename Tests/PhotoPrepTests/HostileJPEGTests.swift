import Foundation
import Testing
@testable import PhotoPrep
import TestSupport

/// Metadata hidden where a segment walk up to the first scan does not look: after the end of the
/// image, between progressive scans, in a JFIF thumbnail. Each file is built here from the committed
/// photos; the output must keep none of it and show the same pixels.
@Suite struct HostileJPEGTests {
    /// Filling the budget (`--quality max`): a fitting JPEG takes the lossless path, where anything hidden in it could
    /// slip through (a score target re-encodes most of these, which keeps nothing but pixels).
    let pipeline = PhotoPipeline(options: { var o = PrepareOptions(preset: .group); o.quality = .max; return o }())

    /// A clean JPEG that `prepare` passes through unchanged (no metadata, within size and budget).
    func cleanJPEG() throws -> [UInt8] {
        let photo = try pipeline.prepare(contentsOf: Fixture.path("orientation/landscape_1.jpg"))
        #expect(try pipeline.prepare(photo.jpeg).report.action == .passedThrough)
        return photo.jpeg
    }

    /// A JPEG that carries GPS in its EXIF: what a second image appended to a photo leaks.
    func withGPS() throws -> [UInt8] { try Fixture.bytes("orientation/landscape_1.jpg") }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        return (0...(haystack.count - needle.count)).contains { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
    }

    /// The offset of the first marker after the first scan's entropy-coded data (found independently of
    /// the pipeline's walker: the first SOS, its length, then the first 0xFF not followed by 00 or RSTn).
    static func endOfFirstScan(_ jpeg: [UInt8]) -> Int {
        var i = 2
        while !(jpeg[i] == 0xFF && jpeg[i + 1] == 0xDA) { i += 2 + (Int(jpeg[i + 2]) << 8 | Int(jpeg[i + 3])) }
        var j = i + 2 + (Int(jpeg[i + 2]) << 8 | Int(jpeg[i + 3]))
        while !(jpeg[j] == 0xFF && jpeg[j + 1] != 0x00 && !(0xD0...0xD7).contains(jpeg[j + 1])) { j += 1 }
        return j
    }

    static func segment(_ marker: UInt8, _ payload: [UInt8]) -> [UInt8] {
        [0xFF, marker, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
    }

    /// `cat photo.jpg another-with-gps.jpg`: the pass-through path used to return the input unchanged.
    /// A file cut right after its start-of-image marker is called truncated, not said to lack the marker it has.
    @Test func aFileEndingAfterItsStartOfImageIsTruncated() throws {
        for (bytes, reason): ([UInt8], String) in [
            ([0xFF, 0xD8, 0xFF], "truncated: the file ends after its start-of-image marker"), ([0xFF, 0xD8, 0xFF, 0xE0], "the file ends inside the 0xE0 segment header"),
        ] {
            let error = #expect(throws: PhotoPrepError.self) { try PhotoPipeline(preset: .group).prepare(bytes) }
            #expect(error?.kind == .corrupt && error?.message.hasPrefix(reason) == true, "\(String(describing: error))")
        }
    }

    @Test func bytesAfterTheEndOfImageAreDropped() throws {
        let clean = try cleanJPEG()
        let gps = try withGPS()
        let input = clean + gps
        let photo = try pipeline.prepare(input)
        #expect(photo.report.action == .metadataStripped)
        #expect(photo.jpeg == clean, "exactly the image, nothing after its EOI")
        #expect(!Self.contains(photo.jpeg, Array("Exif".utf8)))

        let probe = try pipeline.probe(input)
        #expect(probe.trailingBytes == gps.count)
        #expect(probe.plan.action == "strip metadata")
    }

    @Test func bytesAfterTheEndOfImageAreDroppedWhenStrippingToo() throws {
        let gps = try withGPS()
        let zip = Array("PK\u{3}\u{4}motion-photo.mp4 GPS 48.8584N".utf8)
        var options = PrepareOptions(preset: .group)
        options.metadata = .none
        options.quality = .max
        for pipeline in [self.pipeline, PhotoPipeline(options: options)] {
            let photo = try pipeline.prepare(gps + zip)
            #expect(photo.report.action == .metadataStripped)
            #expect(!Self.contains(photo.jpeg, Array("PK\u{3}\u{4}".utf8)))
            #expect(!Self.contains(photo.jpeg, Array("Exif".utf8)))
            #expect(try lumaDifference(decodeJPEG(photo.jpeg), decodeJPEG(gps)) == 0, "lossless")
        }
    }

    /// A COM and an EXIF APP1 placed after the first scan of a progressive JPEG.
    @Test func segmentsBetweenProgressiveScansAreDropped() throws {
        let progressive = try Fixture.bytes("edge/progressive.jpg")
        let exif = try JPEGStructure.parse(try withGPS()).exif!
        let at = Self.endOfFirstScan(progressive)
        let stray = Self.segment(0xFE, Array("secret comment".utf8)) + Self.segment(0xE1, Array("Exif\0\0".utf8) + Array(exif))
        let input = Array(progressive[..<at]) + stray + Array(progressive[at...])
        #expect(try lumaDifference(decodeJPEG(input), decodeJPEG(progressive)) == 0, "libjpeg skips them: a valid file")

        let photo = try pipeline.prepare(input)
        #expect(photo.report.action == .metadataStripped)
        #expect(photo.jpeg == progressive)
        #expect(!Self.contains(photo.jpeg, Array("secret comment".utf8)))
        let probe = try pipeline.probe(input)
        #expect(probe.otherMetadata.contains("comment between scans") && probe.otherMetadata.contains("EXIF between scans"), "\(probe.otherMetadata)")
    }

    /// A JFIF APP0 carrying a 2 × 2 RGB thumbnail: the header is kept, the thumbnail is not.
    @Test func aJFIFThumbnailIsDropped() throws {
        let clean = try cleanJPEG()
        let structure = try JPEGStructure.parse(clean)
        let app0 = try #require(structure.segments.first { $0.marker == 0xE0 })
        let thumbnail: [UInt8] = [250, 1, 2, 3, 250, 4, 5, 6, 250, 7, 8, 9]
        let jfif = Array(clean[app0.payload].prefix(12)) + [2, 2] + thumbnail
        let input = Array(clean[..<app0.range.lowerBound]) + Self.segment(0xE0, jfif) + Array(clean[app0.range.upperBound...])

        let photo = try pipeline.prepare(input)
        #expect(photo.report.action == .metadataStripped)
        #expect(!Self.contains(photo.jpeg, thumbnail))
        #expect(photo.jpeg == clean, "the JFIF header as a thumbnail-less one")
        #expect(try pipeline.probe(input).otherMetadata.contains("JFIF thumbnail"))
    }

    /// A file that holds only what we keep is still passed through byte for byte.
    @Test func aCleanFileIsStillPassedThrough() throws {
        let clean = try cleanJPEG()
        let photo = try pipeline.prepare(clean)
        #expect(photo.report.action == .passedThrough && photo.jpeg == clean)
        #expect(try pipeline.probe(clean).trailingBytes == 0)
    }
}

/// JPEGs that libjpeg (and Pillow) decode despite their oddities: tolerated, with a warning where libjpeg warns.
extension HostileJPEGTests {
    /// Bytes that are not a marker between two header segments: libjpeg skips them with a warning.
    @Test func junkBetweenMarkersIsSkippedWithAWarning() throws {
        let clean = try cleanJPEG()
        let app0 = try #require(try JPEGStructure.parse(clean).segments.first)
        let input = Array(clean[..<app0.range.upperBound]) + Array("JUNKJUNK".utf8) + Array(clean[app0.range.upperBound...])
        let photo = try pipeline.prepare(input)
        #expect(photo.report.warnings.contains { $0.contains("8 extraneous bytes") }, "\(photo.report.warnings)")
        #expect(photo.report.action == .reencoded, "a file with warnings is never passed through")
        #expect(lumaPSNR(try decodeJPEG(photo.jpeg), try decodeJPEG(clean)) > 40)
    }

    /// Adobe APP14 segments cut short at every length: ignored as libjpeg ignores them.
    @Test(arguments: 0...11)
    func aShortAdobeSegmentIsIgnored(length: Int) throws {
        let clean = try cleanJPEG()
        let app0 = try #require(try JPEGStructure.parse(clean).segments.first)
        let adobe = Array(Array("Adobe".utf8) + [0, 100, 0, 0, 0, 0, 1]).prefix(length)
        let input = Array(clean[..<app0.range.upperBound]) + Self.segment(0xEE, Array(adobe)) + Array(clean[app0.range.upperBound...])
        let photo = try pipeline.prepare(input)
        #expect(try lumaDifference(decodeJPEG(photo.jpeg), decodeJPEG(clean)) == 0)
    }

    /// A truncated APP14 whose length field says 0 or 1: libjpeg skips the length field and reads on.
    @Test(arguments: [0, 1])
    func anAdobeSegmentWithAnImpossibleLengthIsSkipped(length: UInt8) throws {
        let clean = try cleanJPEG()
        let app0 = try #require(try JPEGStructure.parse(clean).segments.first)
        let input = Array(clean[..<app0.range.upperBound]) + [0xFF, 0xEE, 0, length] + Array(clean[app0.range.upperBound...])
        let photo = try pipeline.prepare(input)
        #expect(photo.report.warnings.contains { $0.contains("invalid length \(length); skipped") }, "\(photo.report.warnings)")
        #expect(photo.jpeg == clean, "the broken segment is dropped, nothing else changes")
    }

    /// 4:1:0 chroma sampling, progressive: TurboJPEG's header call has no name for it; libjpeg decodes it.
    @Test func fourOneZeroProgressiveDecodes() throws {
        let photo = try pipeline.prepare(contentsOf: Fixture.path("edge/progressive-410.jpg"))
        #expect(photo.report.outputWidth == 240 && photo.report.outputHeight == 160)
        let reference = try decodeJPEG(try pipeline.prepare(contentsOf: Fixture.path("photos/storm-1920x1280.jpg")).jpeg)
        let image = try decodeJPEG(photo.jpeg)
        let center = image.mean(x: 100..<140, y: 60..<100)
        let expected = reference.mean(x: 800..<960, y: 480..<640)
        #expect(close(center, expected, within: 25), "\(center) vs \(expected)")
    }
}
