import Foundation
import Testing
import TestSupport
@testable import PhotoPrep

@Suite struct SSIMULACRA2Tests {
    /// A real photo at 1024 px, as the pipeline resizes it.
    static func photo(_ name: String = "photos/ladybird-2560x1600.jpg", edge: Int = 1024) throws -> PixelImage {
        let bytes = try Fixture.bytes(name)
        let info = try SourceInfo.read(bytes, maxPixels: .max)
        let size = PrepareOptions(maxEdge: edge, maxBytes: .max).outputSize(width: info.width, height: info.height)
        let decoded = try Decoder.decode(bytes, info: info, target: size, options: PrepareOptions(maxEdge: edge, maxBytes: .max))
        return Resizer.resize(decoded.image, width: size.width, height: size.height)
    }

    static func encoded(_ image: PixelImage, quality: Int, fullChroma: Bool = false) throws -> (jpeg: [UInt8], decoded: PixelImage) {
        let jpeg = try JPEGWriter.encode(image, quality: quality, settings: .init(fullChroma: fullChroma)) { Array($0) }
        return (jpeg, try decodeJPEG(jpeg))
    }

    static func png(_ image: PixelImage) -> [UInt8] {
        let rowBytes = image.width * image.channels
        let rows = (0..<image.height).map { Array(image.pixels[($0 * rowBytes)..<(($0 + 1) * rowBytes)]) }
        return TestPNG.png(width: image.width, height: image.height, colorType: image.channels == 1 ? 0 : 2, rows: rows)
    }

    @Test func agreesWithTheIndependentImplementation() async throws {
        // Two real photos (one grey-ish storm, one colourful), four qualities each, both chroma layouts: photoprep's
        // single-precision, row-streamed metric against the PyPI package's double-precision whole-plane one.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ssimulacra2-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        for name in ["photos/ladybird-2560x1600.jpg", "photos/storm-1920x1280.jpg"] {
            let reference = try Self.photo(name, edge: 640)
            let referencePath = folder.appendingPathComponent("reference.png").path
            try Data(Self.png(reference)).write(to: URL(fileURLWithPath: referencePath))
            var ours: [Double] = [], paths: [String] = []
            for (quality, full) in [(30, false), (60, false), (85, false), (95, true)] {
                let (jpeg, decoded) = try Self.encoded(reference, quality: quality, fullChroma: full)
                let path = folder.appendingPathComponent("q\(quality).jpg").path
                try Data(jpeg).write(to: URL(fileURLWithPath: path))
                paths.append(path)
                ours.append(SSIMULACRA2.score(reference, decoded))
            }
            let result = try await runSupportScript("ssimulacra2_score.py", [referencePath] + paths)
            try #require(result.status == 0, "the ssimulacra2 package: \(result.stderr)")
            let theirs = result.stdout.split(separator: "\n").compactMap { Double($0) }
            try #require(theirs.count == ours.count)
            for (a, b) in zip(ours, theirs) {
                #expect(abs(a - b) < 0.05, "\(name): photoprep \(a), ssimulacra2 package \(b)")
            }
            #expect(ours == ours.sorted(), "higher qualities score higher: \(ours)")
        }
    }

    @Test func theSameImageScores100AndSmallImagesHaveNoScale() throws {
        let image = try Self.photo(edge: 256)
        #expect(SSIMULACRA2.score(image, image) == 100)
        let tiny = PixelImage(width: 7, height: 40, channels: 3, pixels: [UInt8](repeating: 90, count: 7 * 40 * 3))
        var other = tiny
        other.pixels[0] = 0
        #expect(SSIMULACRA2.score(tiny, other) == 100)  // no scale is 8 px wide: nothing to compare
    }

    @Test func greyImagesAreScoredAsRGB() throws {
        let colour = try Self.photo(edge: 300)
        let grey = PixelImage(width: colour.width, height: colour.height, channels: 1, pixels: colour.luma.map { UInt8($0.rounded()) })
        let greyJPEG = try Self.encoded(grey, quality: 15).decoded
        let asRGB = { (image: PixelImage) in
            PixelImage(width: image.width, height: image.height, channels: 3, pixels: image.pixels.flatMap { [$0, $0, $0] })
        }
        #expect(greyJPEG.channels == 1)
        #expect(SSIMULACRA2.score(grey, greyJPEG) == SSIMULACRA2.score(asRGB(grey), asRGB(greyJPEG)))
        #expect(SSIMULACRA2.score(grey, greyJPEG) < 90)
    }

    @Test func aKeptReferenceScoresBitForBitTheSame() throws {
        // Odd sizes (an odd last row and column at every scale), grey and colour, many candidates against one reference.
        for (name, edge) in [("photos/ladybird-2560x1600.jpg", 511), ("photos/storm-1920x1280.jpg", 301), ("edge/grey.jpg", 200)] {
            let image = try Self.photo(name, edge: edge)
            var reference = ScoringReference(image)
            for (quality, fullChroma) in [(30, false), (70, true), (90, false), (55, false), (97, true)] {
                let candidate = try Self.encoded(image, quality: quality, fullChroma: fullChroma).decoded
                let kept = reference.score(candidate), streamed = SSIMULACRA2.score(image, candidate)
                #expect(kept == streamed, "\(name) at \(edge) px, quality \(quality): \(kept) kept, \(streamed) streamed")
            }
            #expect(reference.score(image) == 100)
        }
    }
}

