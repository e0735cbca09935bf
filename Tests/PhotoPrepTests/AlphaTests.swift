import Foundation
import Testing
import TestSupport
@testable import PhotoPrep

/// Transparency flattened as browsers, viewers, Pillow and ImageMagick show it: in the sRGB-encoded
/// space, `samples × alpha + background × (1 − alpha)` — not in linear light, as libpng's simplified API
/// composes (mean difference 13.6 on PngSuite's basn6a08 against this formula before).
@Suite struct AlphaTests {
    /// The pipeline's full-size decode of `png` onto `background`.
    func decode(_ png: [UInt8], background: RGBColor = .white) throws -> PixelImage {
        let info = try SourceInfo.read(png, maxPixels: .max)
        var options = PrepareOptions(maxEdge: .max, maxBytes: .max)
        options.background = background
        return try Decoder.decode(png, info: info, target: (info.width, info.height), options: options).image
    }

    /// The formula, from samples and alpha in [0, 1], to 8 bits.
    static func expected(_ sample: Double, _ alpha: Double, _ background: UInt8) -> UInt8 {
        UInt8((255 * (sample * alpha + Double(background) / 255 * (1 - alpha))).rounded())
    }

    static let width = 256

    @Test func eightBitRGBA() throws {
        let rows: [[UInt8]] = [(0..<Self.width).flatMap { x -> [UInt8] in [200, 100, 50, UInt8(x)] }]
        let background = RGBColor(red: 20, green: 240, blue: 128)
        let image = try decode(TestPNG.png(width: Self.width, height: 1, colorType: 6, rows: rows), background: background)
        for x in 0..<Self.width {
            let a = Double(x) / 255
            let want = (Self.expected(200 / 255, a, 20), Self.expected(100 / 255, a, 240), Self.expected(50 / 255, a, 128))
            #expect(image.rgb(x: x, y: 0) == want, "x = \(x)")
        }
    }

    /// 16-bit samples and alpha: composed before rounding to 8 bits (one rounding in all).
    @Test func sixteenBitRGBAIsComposedIn16BitPrecision() throws {
        let samples: [(r: UInt16, g: UInt16, b: UInt16, a: UInt16)] = (0..<Self.width).map { (x: Int) in
            let g: Int = 1_234 + x * 97
            let b: Int = 65_535 - x * 200
            let a: Int = x * 257 + x % 7
            return (UInt16(40_000), UInt16(g), UInt16(b), UInt16(min(a, 65_535)))
        }
        let row: [UInt8] = samples.flatMap { p -> [UInt8] in
            [p.r, p.g, p.b, p.a].flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
        }
        let image = try decode(TestPNG.png(width: Self.width, height: 1, bitDepth: 16, colorType: 6, rows: [row]))
        for (x, p) in samples.enumerated() {
            let a = Double(p.a) / 65535
            let want = (Self.expected(Double(p.r) / 65535, a, 255), Self.expected(Double(p.g) / 65535, a, 255), Self.expected(Double(p.b) / 65535, a, 255))
            #expect(image.rgb(x: x, y: 0) == want, "x = \(x)")
        }
    }

    @Test func greyWithAlpha() throws {
        let rows: [[UInt8]] = [(0..<Self.width).flatMap { x -> [UInt8] in [90, UInt8(255 - x)] }]
        let image = try decode(TestPNG.png(width: Self.width, height: 1, colorType: 4, rows: rows), background: RGBColor(red: 0, green: 0, blue: 0))
        for x in 0..<Self.width {
            let v = Self.expected(90 / 255, Double(255 - x) / 255, 0)
            #expect(image.rgb(x: x, y: 0) == (v, v, v), "x = \(x)")
        }
    }

    @Test func paletteWithTransparency() throws {
        // Four palette entries: red opaque, green at alpha 64, blue at 128, white at 0.
        let plte = TestPNG.chunk("PLTE", [255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255])
        let trns = TestPNG.chunk("tRNS", [255, 64, 128, 0])
        let image = try decode(TestPNG.png(width: 4, height: 1, colorType: 3, rows: [[0, 1, 2, 3]], extra: plte + trns),
                               background: RGBColor(red: 0, green: 0, blue: 0))
        #expect(image.rgb(x: 0, y: 0) == (255, 0, 0))
        #expect(image.rgb(x: 1, y: 0) == (0, Self.expected(1, 64 / 255, 0), 0))
        #expect(image.rgb(x: 2, y: 0) == (0, 0, Self.expected(1, 128 / 255, 0)))
        #expect(image.rgb(x: 3, y: 0) == (0, 0, 0))
    }

    /// A gAMA chunk without sRGB or iCCP is honoured, as browsers do: linear-light samples (gamma 1.0) are
    /// converted to sRGB, with transparency (row reader) and without (simplified API) alike.
    @Test func gammaIsHonouredWithAndWithoutAlpha() throws {
        let gama = TestPNG.chunk("gAMA", TestPNG.be32(100_000))  // gamma 1.0
        let opaque = try decode(TestPNG.png(width: 1, height: 1, colorType: 2, rows: [[128, 128, 128]], extra: gama))
        let withAlpha = try decode(TestPNG.png(width: 1, height: 1, colorType: 6, rows: [[128, 128, 128, 255]], extra: gama))
        #expect(opaque.rgb(x: 0, y: 0).0 > 170, "linear 0.5 is light in sRGB: \(opaque.rgb(x: 0, y: 0))")
        #expect(abs(Int(withAlpha.rgb(x: 0, y: 0).0) - Int(opaque.rgb(x: 0, y: 0).0)) <= 1, "with alpha \(withAlpha.rgb(x: 0, y: 0)) vs opaque \(opaque.rgb(x: 0, y: 0))")
    }

    /// The committed alpha fixtures still flatten as before (fully opaque or fully transparent pixels).
    @Test func committedAlphaFixturesKeepTheirColours() throws {
        let half = try decodeFixture("edge/rgba-half-transparent.png")
        #expect(half.rgb(x: 5, y: 5) == (0, 200, 0) && half.rgb(x: 5, y: 35) == (255, 255, 255))
        let black = try decodeFixture("edge/grey-alpha-transparent.png", background: RGBColor(red: 0, green: 0, blue: 0))
        #expect(black.rgb(x: 3, y: 3) == (0, 0, 0))
    }
}

extension AlphaTests {
    /// libpng's warnings reach the report on the row-by-row path too, and `strict` makes them errors,
    /// as on the simplified API's path (here: an ancillary chunk with a broken CRC).
    @Test func libpngWarningsAreReportedForTransparentPNGsToo() throws {
        var text = TestPNG.chunk("tEXt", Array("Comment\0hello".utf8))
        text[text.count - 1] ^= 0xFF
        let rows: [[UInt8]] = [[10, 20, 30, 128]]
        for (colorType, row) in [(UInt8(6), rows[0]), (UInt8(2), Array(rows[0].prefix(3)))] {
            let png = TestPNG.png(width: 1, height: 1, colorType: colorType, rows: [row], extra: text)
            let photo = try PhotoPipeline(preset: .group).prepare(png)
            #expect(photo.report.warnings.contains { $0.hasPrefix("libpng: ") }, "colour type \(colorType): \(photo.report.warnings)")
            var strict = PrepareOptions(preset: .group)
            strict.strict = true
            #expect(throws: PhotoPrepError.self, "colour type \(colorType)") { try PhotoPipeline(options: strict).prepare(png) }
        }
    }
}
