import Foundation
import Testing
@testable import PhotoPrep

/// Small files with huge claims: refused from their headers, before anything is allocated.
@Suite struct MemoryBudgetTests {
    let pipeline = PhotoPipeline(preset: .group)

    /// A PNG chunk: length, type, data, CRC.
    static func chunk(_ type: String, _ data: [UInt8], length: UInt32? = nil) -> [UInt8] {
        let typeBytes = Array(type.utf8)
        return be32(length ?? UInt32(data.count)) + typeBytes + data + be32(UInt32(crc32(typeBytes + data)))
    }

    static func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    static func ihdr(width: UInt32, height: UInt32) -> [UInt8] {
        chunk("IHDR", be32(width) + be32(height) + [8, 2, 0, 0, 0])
    }

    /// 45 bytes declaring a 2 GiB tEXt chunk: refused by our own chunk walk, libpng never sees it.
    @Test func aChunkLongerThanTheFileIsRefusedBeforeLibPNG() throws {
        let bomb = Self.signature + Self.ihdr(width: 1, height: 1) + Self.be32(0x7FFF_FFF0) + Array("tEXtabcd".utf8)
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
        let ihdr = Self.chunk("IHDR", Self.be32(16383) + Self.be32(16383) + [8, 2, 0, 0, 1])
        let png = Self.signature + ihdr + Self.chunk("IDAT", [0x78, 0x9C, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01]) + Self.chunk("IEND", [])
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
    /// A zlib stream of stored (uncompressed) deflate blocks: enough for a test PNG, no zlib needed.
    static func zlibStored(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var at = 0
        repeat {
            let count = min(65535, data.count - at)
            let final: UInt8 = at + count == data.count ? 1 : 0
            out += [final, UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8((~count >> 8) & 0xFF)]
            out += data[at..<(at + count)]
            at += count
        } while at < data.count
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in data { a = (a + UInt32(byte)) % 65521; b = (b + a) % 65521 }
        return out + be32(b << 16 | a)
    }

    /// An 8-bit PNG of colour type `colorType` (0 grey, 2 RGB, 4 grey + alpha, 6 RGBA) from its rows.
    static func png(width: Int, height: Int, colorType: UInt8, rows: [[UInt8]]) -> [UInt8] {
        let raw: [UInt8] = rows.flatMap { row -> [UInt8] in [0] + row }  // filter type 0 on every row
        return signature + chunk("IHDR", be32(UInt32(width)) + be32(UInt32(height)) + [8, colorType, 0, 0, 0])
            + chunk("IDAT", zlibStored(raw)) + chunk("IEND", [])
    }

    /// Semi-transparent pixels composed in the sRGB-encoded space: `c × a + background × (1 − a)`.
    @Test func streamedRowsComposeAlphaAsViewersShowIt() throws {
        let width = 256
        let first: [UInt8] = (0..<width).flatMap { x -> [UInt8] in [200, 100, 50, UInt8(x)] }
        let second: [UInt8] = (0..<width).flatMap { x -> [UInt8] in [0, 255, 10, UInt8(255 - x)] }
        let rgba = Self.png(width: width, height: 2, colorType: 6, rows: [first, second])
        let background = RGBColor(red: 255, green: 255, blue: 255)
        var rows: [[UInt8]] = []
        try LibPNGRowReader.read(rgba, grey: false, background: background) { rows.append(Array($0)) }
        #expect(rows.count == 2 && rows.allSatisfy { $0.count == width * 3 })
        func expected(_ c: Int, _ a: Int) -> UInt8 { UInt8((c * a + 255 * (255 - a) + 127) / 255) }
        for x in 0..<width {
            #expect(Array(rows[0][(x * 3)..<(x * 3 + 3)]) == [expected(200, x), expected(100, x), expected(50, x)], "x = \(x)")
            #expect(Array(rows[1][(x * 3)..<(x * 3 + 3)]) == [expected(0, 255 - x), expected(255, 255 - x), expected(10, 255 - x)])
        }
        let greyAlpha = Self.png(width: 2, height: 1, colorType: 4, rows: [[100, 128, 30, 0]])
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
        let whole = try PhotoPipeline(options: options).prepare(contentsOf: Fixture.path("edge/photo-rgb8.png"))
        #expect(!whole.report.warnings.contains { $0.contains("row by row") })
        options.maxMemory = 500 * 1024  // the 480 × 320 photo whole needs ~0.7 MB
        let streamed = try PhotoPipeline(options: options).prepare(contentsOf: Fixture.path("edge/photo-rgb8.png"))
        #expect(streamed.report.warnings.contains { $0.contains("read row by row and shrunk to 1/2") }, "\(streamed.report.warnings)")
        #expect(streamed.report.decodeScale == 2)
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
