import Testing
@testable import PhotoPrep
import TestSupport

@Suite struct DecoderTests {
    // MARK: JPEG

    @Test func progressiveAndArithmeticDecodeLikeBaseline() throws {
        let progressive = try decodeFixture("edge/progressive.jpg")
        let arithmetic = try decodeFixture("edge/arithmetic.jpg")
        #expect(progressive.width == 480 && progressive.height == 320)
        // Both are lossless transcodes of the same baseline JPEG: identical pixels.
        #expect(progressive == arithmetic)
        #expect(progressive.luma.reduce(0, +) / Double(480 * 320) > 20, "not a black image")
    }

    @Test func greyJPEGDecodesToOneChannel() throws {
        let grey = try decodeFixture("edge/grey.jpg")
        let colour = try decodeFixture("edge/progressive.jpg")
        #expect(grey.channels == 1)
        #expect(lumaDifference(grey, colour) < 3)
    }

    @Test func cmykPatchesComeOutInTheirColours() throws {
        let image = try decodeFixture("edge/cmyk-patches.jpg")
        #expect(image.channels == 3)
        let expected: [(Double, Double, Double)] = [
            (0, 255, 255),  // cyan ink
            (255, 0, 255),  // magenta
            (255, 255, 0),  // yellow
            (0, 0, 0),  // black
            (255, 255, 255),  // no ink
        ]
        for (i, colour) in expected.enumerated() {
            let seen = image.mean(x: (i * 32 + 8)..<(i * 32 + 24), y: 8..<24)
            #expect(close(seen, colour, within: 6), "patch \(i): \(seen)")
        }
    }

    @Test func cmykPhotoMatchesItsRGBOriginal() throws {
        // ImageMagick converted the same storm crop to CMYK: it must not come out inverted.
        let cmyk = try decodeFixture("edge/cmyk-photo.jpg")
        let rgb = try decodeFixture("edge/progressive.jpg")
        #expect(lumaDifference(cmyk, rgb) < 8)
    }

    @Test func truncatedJPEGDecodesWithAWarning() throws {
        let photo = try PhotoPipeline(preset: .group).prepare(contentsOf: Fixture.path("edge/truncated.jpg"))
        #expect(photo.report.warnings.contains { $0.contains("Premature end of JPEG file") })
        #expect(photo.report.outputWidth == 1920)
    }

    @Test func strictTurnsTheTruncationWarningIntoAnError() throws {
        var options = PrepareOptions(preset: .group)
        options.strict = true
        let error = #expect(throws: PhotoPrepError.self) {
            try PhotoPipeline(options: options).prepare(contentsOf: Fixture.path("edge/truncated.jpg"))
        }
        #expect(error?.stage == .decode)
        #expect(error?.kind == .corrupt)
        #expect(error?.message.contains("Premature end of JPEG file") == true)
    }

    @Test func shrinkOnLoadPicksTheLargestFactorLeavingTheMargin() {
        // 4032 × 3024 phone photo → 1024 × 768.
        #expect(Decoder.shrinkOnLoadScale(width: 4032, height: 3024, target: (1024, 768), margin: 1.5) == 2)
        #expect(Decoder.shrinkOnLoadScale(width: 4032, height: 3024, target: (1024, 768), margin: 2) == 1)
        #expect(Decoder.shrinkOnLoadScale(width: 4032, height: 3024, target: (1024, 768), margin: 1) == 2)
        #expect(Decoder.shrinkOnLoadScale(width: 8000, height: 6000, target: (1024, 768), margin: 1) == 4)
        #expect(Decoder.shrinkOnLoadScale(width: 16000, height: 12000, target: (1024, 768), margin: 1) == 8)
        #expect(Decoder.shrinkOnLoadScale(width: 1000, height: 800, target: (1000, 800), margin: 1) == 1)
    }

    // MARK: PNG

    @Test func sixteenBitGreyKeepsItsLevel() throws {
        let image = try decodeFixture("edge/grey16-mid.png")
        #expect(image.channels == 1)
        #expect(Set(image.pixels) == [128], "32768/65535 is mid-grey in sRGB, not \(Set(image.pixels))")
    }

    @Test func sixteenBitRGBGradient() throws {
        let image = try decodeFixture("edge/rgb16-gradient.png")
        #expect(image.rgb(x: 0, y: 0) == (0, 255, 128))
        #expect(image.rgb(x: 255, y: 10) == (255, 0, 128))
        #expect(image.rgb(x: 100, y: 5).0 == 100)
    }

    @Test func oneBitGrey() throws {
        let image = try decodeFixture("edge/grey1-checker.png")
        #expect(image.pixels[0] == 255 && image.pixels[4] == 0)
        #expect(Set(image.pixels) == [0, 255])
    }

    @Test func paletteTransparencyBecomesTheBackground() throws {
        let white = try decodeFixture("edge/palette-trns.png")
        #expect(white.rgb(x: 5, y: 5) == (255, 255, 255))
        #expect(white.rgb(x: 40, y: 5) == (255, 0, 0))
        #expect(white.rgb(x: 60, y: 5) == (0, 0, 255))
        let black = try decodeFixture("edge/palette-trns.png", background: .black)
        #expect(black.rgb(x: 5, y: 5) == (0, 0, 0))
    }

    @Test func greyAlphaAndRGBAFlattenOntoWhite() throws {
        let grey = try decodeFixture("edge/grey-alpha-transparent.png")
        #expect(Set(grey.pixels) == [255])
        let rgba = try decodeFixture("edge/rgba-half-transparent.png")
        #expect(rgba.rgb(x: 10, y: 5) == (0, 200, 0))
        #expect(rgba.rgb(x: 10, y: 35) == (255, 255, 255))
    }

    @Test func interlacedPNGDecodesLikeTheNonInterlacedOne() throws {
        #expect(try decodeFixture("edge/interlaced.png") == decodeFixture("edge/photo-rgb8.png"))
    }

    @Test func animatedPNGGivesTheFirstFrame() throws {
        let photo = try PhotoPipeline(preset: .group).prepare(contentsOf: Fixture.path("edge/animated.png"))
        let image = try decodeJPEG(photo.jpeg)
        #expect(close(image.mean(x: 4..<12, y: 4..<12), (0, 255, 0), within: 4))
        #expect(photo.report.warnings.contains { $0.contains("first frame") })
    }

    /// Cut inside a chunk: refused by the chunk walk before libpng reads it (libpng's simplified API
    /// fails on truncated data too, so nothing that decoded before is lost).
    @Test func truncatedPNGFailsNamingTheChunk() throws {
        let error = #expect(throws: PhotoPrepError.self) {
            try PhotoPipeline(preset: .group).prepare(contentsOf: Fixture.path("edge/truncated.png"))
        }
        #expect(error?.stage == .decode)
        #expect(error?.kind == .corrupt)
        #expect(error?.message.contains("chunk at byte") == true && error?.message.contains("truncated") == true, "\(error?.message ?? "")")
        #expect(error?.file == Fixture.path("edge/truncated.png"))
    }
}
