import Foundation
import Testing
@testable import PhotoPrep
import TestSupport

/// Every prepared photo carries a placeholder: a ThumbHash of the pixels stored, which any ThumbHash decoder draws
/// with the photo's colours and shape.
@Suite struct ThumbHashTests {
    static let photos = [
        "photos/ladybird-2560x1600.jpg", "photos/storm-1920x1280.jpg", "orientation/landscape_6.jpg", "edge/grey.jpg",
        "edge/rgba-half-transparent.png", "formats/photo.heic", "formats/lossy.webp", "edge/with-icc-and-gps.jpg",
    ]

    static func mean(_ image: PixelImage) -> [Double] {
        var sums = [0.0, 0.0, 0.0]
        for y in 0..<image.height {
            for x in 0..<image.width {
                let (r, g, b) = image.rgb(x: x, y: y)
                sums[0] += Double(r)
                sums[1] += Double(g)
                sums[2] += Double(b)
            }
        }
        return sums.map { $0 / Double(image.width * image.height) }
    }

    static func farthest(_ a: [Double], _ b: [Double]) -> Double { zip(a, b).map { abs($0 - $1) }.max()! }

    /// Drawn, the placeholder has the stored photo's average colour (within 8 levels: the format keeps it in 6 bits)
    /// and its shape; the same check against another photo fails.
    @Test(arguments: photos)
    func thePlaceholderHasThePhotosColourAndShape(file: String) throws {
        let photo = try PhotoPipeline(options: PrepareOptions(preset: .group)).prepare(contentsOf: Fixture.path(file))
        let stored = try decodeJPEG(photo.jpeg)
        #expect(photo.report.placeholder == ThumbHash.base64(photo.placeholder))
        #expect(Data(base64Encoded: try #require(photo.report.placeholder)).map([UInt8].init) == photo.placeholder)
        #expect((15...30).contains(photo.placeholder.count), "\(photo.placeholder.count) bytes")
        let drawn = try #require(ThumbHash.decode(photo.placeholder))
        let mean = [drawn.meanRGB.red, drawn.meanRGB.green, drawn.meanRGB.blue], expected = Self.mean(stored)
        #expect(Self.farthest(mean, expected) < 8, "\(file): placeholder \(mean), photo \(expected)")
        let average = try #require(ThumbHash.averageColor(of: photo.placeholder))
        #expect(Self.farthest([average.red * 255, average.green * 255, average.blue * 255], expected) < 8)
        #expect(average.alpha == 1, "stored photos are opaque")
        // Its shape: the long side 32 px, the other in the photo's proportion (the format keeps it in sevenths).
        #expect(max(drawn.width, drawn.height) == 32 && (drawn.width > drawn.height) == (stored.width > stored.height))
        let ratio = Double(stored.width) / Double(stored.height), drawnRatio = Double(drawn.width) / Double(drawn.height)
        #expect(abs(log(drawnRatio / ratio)) < 0.2, "\(file): \(drawnRatio) for \(ratio)")
        let other = Self.mean(try decodeJPEG(try Fixture.bytes(file.contains("storm") ? "photos/ladybird-2560x1600.jpg" : "photos/storm-1920x1280.jpg")))
        if Self.farthest(other, expected) > 20 { #expect(Self.farthest(mean, other) > 10) }
    }

    /// A photo kept byte for byte (passed through, or turned upright losslessly) gets one too, from the pixels its
    /// check decoded; and it matches the one of the same photo re-encoded.
    @Test(arguments: ["edge/with-icc-and-gps.jpg", "orientation/landscape_6.jpg"])
    func aPhotoKeptAsItIsHasOne(file: String) throws {
        var options = PrepareOptions(preset: .group)
        options.quality = .max
        let kept = try PhotoPipeline(options: options).prepare(contentsOf: Fixture.path(file))
        #expect(kept.report.action != .reencoded)
        options.allowPassThrough = false
        let reencoded = try PhotoPipeline(options: options).prepare(contentsOf: Fixture.path(file))
        let a = try #require(ThumbHash.decode(kept.placeholder)), b = try #require(ThumbHash.decode(reencoded.placeholder))
        #expect(a.width == b.width && a.height == b.height)
        #expect(Self.farthest([a.meanRGB.red, a.meanRGB.green, a.meanRGB.blue], [b.meanRGB.red, b.meanRGB.green, b.meanRGB.blue]) < 4)
    }

    /// thumbhash-python, written apart from ours from the same format, draws our placeholders as our decoder does.
    @Test func anotherImplementationDrawsOurPlaceholders() async throws {
        var hashes: [[UInt8]] = []
        for file in Self.photos { hashes.append(try PhotoPipeline(options: PrepareOptions(preset: .group)).prepare(contentsOf: Fixture.path(file)).placeholder) }
        let result = try await runSupportScript("thumbhash_decode.py", hashes.map(ThumbHash.base64))
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n")
        try #require(lines.count == hashes.count)
        for (line, hash) in zip(lines, hashes) {
            let fields = line.split(separator: " ").map { Double($0)! }
            let ours = try #require(ThumbHash.decode(hash))
            #expect(Int(fields[0]) == ours.width && Int(fields[1]) == ours.height, "\(line)")
            #expect(Self.farthest(Array(fields[2...]), [ours.meanRGB.red, ours.meanRGB.green, ours.meanRGB.blue]) < 1, "\(line)")
        }
    }

    /// Uniform colours come back as themselves, within the format's quantisation; a flat image has no AC terms.
    @Test(arguments: [(200, 30, 40), (10, 120, 230), (128, 128, 128), (250, 250, 250)])
    func flatColoursComeBack(colour: (Int, Int, Int)) throws {
        let pixels = (0..<(60 * 40)).flatMap { _ in [UInt8(colour.0), UInt8(colour.1), UInt8(colour.2)] }
        let hash = ThumbHash.encode(PixelImage(width: 60, height: 40, channels: 3, pixels: pixels))
        let drawn = try #require(ThumbHash.decode(hash))
        #expect(Self.farthest([drawn.meanRGB.red, drawn.meanRGB.green, drawn.meanRGB.blue], [Double(colour.0), Double(colour.1), Double(colour.2)]) < 8)
        #expect(drawn.width == 32 && drawn.height == 23, "7 luminance terms across, 5 down: 7 / 5 of 32")
    }

    @Test func tooShortIsNoThumbHash() {
        #expect(ThumbHash.decode([1, 2, 3]) == nil)
        #expect(ThumbHash.decode([0x1F, 0xE7, 0x0D, 0x15, 0x82]) == nil, "AC terms missing")
        #expect(ThumbHash.base64([0xFF]) == "/w==" && ThumbHash.base64([1, 2]) == "AQI=" && ThumbHash.base64([1, 2, 3]) == "AQID")
    }
}
