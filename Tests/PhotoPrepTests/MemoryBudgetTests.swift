import Foundation
import Testing
@testable import PhotoPrep
import TestSupport

/// Small files with huge claims: refused from their headers, before anything is allocated.
@Suite struct MemoryBudgetTests {
    let pipeline = PhotoPipeline(preset: .group)

    /// 45 bytes declaring a 2 GiB tEXt chunk: refused by our own chunk walk, libpng never sees it.
    @Test func aChunkLongerThanTheFileIsRefusedBeforeLibPNG() throws {
        let bomb = TestPNG.signature + TestPNG.ihdr(width: 1, height: 1) + TestPNG.be32(0x7FFF_FFF0) + Array("tEXtabcd".utf8)
        #expect(bomb.count == 45)
        do {
            _ = try pipeline.prepare(bomb)
            Issue.record("a 2 GiB chunk in 45 bytes was accepted")
        } catch {
            #expect(error.kind == .corrupt)
            #expect(error.message.contains("\"tEXt\" chunk") && error.message.contains("declares 2147483632 bytes"), "\(error.message)")
        }
    }

    /// A valid-looking 16383 × 16383 interlaced RGB PNG header: 805 MB decoded whole (Adam7 cannot be
    /// streamed), over the default 256 MiB.
    @Test func aHugeInterlacedPNGIsRefusedByTheMemoryBudget() throws {
        let ihdr = TestPNG.chunk("IHDR", TestPNG.be32(16383) + TestPNG.be32(16383) + [8, 2, 0, 0, 1])
        let png = TestPNG.signature + ihdr + TestPNG.chunk("IDAT", [0x78, 0x9C, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01]) + TestPNG.chunk("IEND", [])
        do {
            _ = try pipeline.prepare(png)
            Issue.record("accepted")
        } catch {
            #expect(error.stage == .limits && error.kind == .tooLarge)
            #expect(error.message.contains("memory budget of 256 MiB") && error.message.contains("decoded whole"), "\(error.message)")
        }
    }

    /// The committed progressive photo with its frame header claiming 16383 × 16383: every coefficient
    /// would be held (1 GiB at 4:2:0). Refused by default; with a larger budget it decodes — with a
    /// warning that most of the image is missing, instead of a silent grey picture.
    @Test func aProgressiveJPEGClaimingHugeDimensions() throws {
        var bytes = try Fixture.bytes("edge/progressive.jpg")
        let sof = try #require(try JPEGStructure.parse(bytes).segments.first { [0xC0, 0xC1, 0xC2].contains($0.marker) })
        for at in [sof.range.lowerBound + 5, sof.range.lowerBound + 7] { bytes[at] = 0x3F; bytes[at + 1] = 0xFF }
        do {
            _ = try pipeline.prepare(bytes)
            Issue.record("accepted")
        } catch {
            #expect(error.kind == .tooLarge && error.message.contains("holds all its coefficients (1.0 GiB)"), "\(error.message)")
        }
        #expect(try pipeline.probe(bytes).plan.action.hasPrefix("refuse: preparing it needs about"))

        var options = PrepareOptions(preset: .group)
        options.maxMemory = 4 << 30
        let photo = try PhotoPipeline(options: options).prepare(bytes)
        #expect(photo.report.warnings.contains { $0.contains("most of the image is missing") }, "\(photo.report.warnings)")
    }

    /// Real photos stay well inside the budget: the estimate is not a blanket refusal.
    @Test(arguments: ["photos/ladybird-2560x1600.jpg", "photos/storm-1920x1280.jpg", "edge/progressive.jpg", "edge/rgb16-gradient.png"])
    func realPhotosFitTheBudget(file: String) throws {
        let bytes = try Fixture.bytes(file)
        let info = try SourceInfo.read(bytes, maxPixels: .max)
        let target = pipeline.options.outputSize(width: info.width, height: info.height)
        let estimate = MemoryEstimate(info: info, fileBytes: bytes.count, scale: 1, target: target)
        #expect(estimate.bytes < 64 << 20, "\(file): \(estimate)")
        #expect(estimate.bytes > info.width * info.height, "\(file): at least the decoded image")
    }
}

/// PNGs too large to decode whole within the budget: read row by row and shrunk while they stream.
extension MemoryBudgetTests {
    /// Semi-transparent pixels composed in the sRGB-encoded space: `c × a + background × (1 − a)`.
    @Test func streamedRowsComposeAlphaAsViewersShowIt() throws {
        let width = 256
        let first: [UInt8] = (0..<width).flatMap { x -> [UInt8] in [200, 100, 50, UInt8(x)] }
        let second: [UInt8] = (0..<width).flatMap { x -> [UInt8] in [0, 255, 10, UInt8(255 - x)] }
        let rgba = TestPNG.png(width: width, height: 2, colorType: 6, rows: [first, second])
        let background = RGBColor(red: 255, green: 255, blue: 255)
        var rows: [[UInt8]] = []
        try LibPNGRowReader.read(rgba, grey: false, background: background) { rows.append(Array($0)) }
        #expect(rows.count == 2 && rows.allSatisfy { $0.count == width * 3 })
        func expected(_ c: Int, _ a: Int) -> UInt8 { UInt8((c * a + 255 * (255 - a) + 127) / 255) }
        for x in 0..<width {
            #expect(Array(rows[0][(x * 3)..<(x * 3 + 3)]) == [expected(200, x), expected(100, x), expected(50, x)], "x = \(x)")
            #expect(Array(rows[1][(x * 3)..<(x * 3 + 3)]) == [expected(0, 255 - x), expected(255, 255 - x), expected(10, 255 - x)])
        }
        let greyAlpha = TestPNG.png(width: 2, height: 1, colorType: 4, rows: [[100, 128, 30, 0]])
        var grey: [[UInt8]] = []
        try LibPNGRowReader.read(greyAlpha, grey: false, background: RGBColor(red: 0, green: 0, blue: 0)) { grey.append(Array($0)) }
        #expect(grey == [[50, 50, 50, 0, 0, 0]], "grey + alpha as RGB onto black")
    }

    @Test func theBoxShrinkerAveragesBlocksAndEdges() {
        // 5 × 3 grey, factor 2: blocks 2×2, 2×2, 1×2 (right edge), then 2×1, 2×1, 1×1 (bottom edge).
        let rows: [[UInt8]] = [[0, 10, 20, 30, 40], [100, 110, 120, 130, 140], [7, 9, 11, 13, 255]]
        var shrinker = BoxShrinker(width: 5, height: 3, channels: 1, factor: 2)
        for row in rows { row.withUnsafeBufferPointer { shrinker.add($0) } }
        let image = shrinker.image
        #expect(image.width == 3 && image.height == 2)
        #expect(image.pixels == [55, 75, 90, 8, 12, 255])
    }

    /// A PNG over the budget when decoded whole is streamed and shrunk instead — and looks the same.
    @Test func aPNGOverTheBudgetIsStreamedAndLooksTheSame() throws {
        var options = PrepareOptions(maxEdge: 100, maxBytes: 500 * 1024)
        options.shrinkOnLoadMargin = 1  // shrunk while streamed as far as still covers the output
        let whole = try PhotoPipeline(options: options).prepare(contentsOf: Fixture.path("edge/photo-rgb8.png"))
        #expect(!whole.report.warnings.contains { $0.contains("row by row") })
        options.maxMemory = 500 * 1024  // the 480 × 320 photo whole needs ~0.7 MB
        let streamed = try PhotoPipeline(options: options).prepare(contentsOf: Fixture.path("edge/photo-rgb8.png"))
        #expect(streamed.report.warnings.contains { $0.contains("read row by row and shrunk to 1/4") }, "\(streamed.report.warnings)")
        #expect(streamed.report.decodeScale == 4)  // 120 × 80 still covers 100 × 67
        #expect((streamed.report.outputWidth, streamed.report.outputHeight) == (whole.report.outputWidth, whole.report.outputHeight))
        let psnr = lumaPSNR(try decodeJPEG(streamed.jpeg), try decodeJPEG(whole.jpeg))
        #expect(psnr > 35, "\(psnr) dB")
    }

    /// Interlaced PNGs cannot be streamed (every pass covers the whole image): over the budget, refused.
    @Test func anInterlacedPNGOverTheBudgetIsRefused() throws {
        var options = PrepareOptions(maxEdge: 100, maxBytes: 500 * 1024)
        options.maxMemory = 500 * 1024
        do {
            _ = try PhotoPipeline(options: options).prepare(contentsOf: Fixture.path("edge/interlaced.png"))
            Issue.record("accepted")
        } catch {
            #expect(error.kind == .tooLarge && error.message.contains("decoded whole"), "\(error.message)")
        }
    }
}
