import Foundation
import Testing
@testable import PhotoPrep
import TestSupport

/// HEIF, PNG and WebP files made to exhaust the process or mislead it, from an adversarial review: each refused, or
/// decoded without the work it was made to cause, before the codec library does that work.
@Suite struct HostileFormatTests {
    func expectFailure(_ bytes: [UInt8], _ kind: PhotoPrepError.Kind, containing words: String, options: PrepareOptions = PrepareOptions(preset: .photo)) {
        do {
            let prepared = try PhotoPipeline(options: options).prepare(bytes)
            Issue.record("prepared \(prepared.report.outputWidth) × \(prepared.report.outputHeight); expected \(kind): \(words)")
        } catch {
            #expect(error.kind == kind && error.message.contains(words), "\(error)")
        }
    }

    /// Fifty EXIF items of 32 extents each over the same 64 KiB: the items claim 100 MiB of a 0.3 MB file (a thousand of
    /// them made libheif 1.15 allocate until the process aborted). Refused from the boxes, before libheif reads an item;
    /// every real HEIF and AVIF here claims no more than its own size.
    @Test func heifItemsClaimingMoreThanTheFileHoldsAreRefused() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let hostile = folder.appendingPathComponent("overlapping.heic").path
        let made = try await runSupportCommand("python3", [Fixture.path("heif_boxes.py"), "overlapping", Fixture.path("formats/photo.heic"), hostile, "50", "65536", "32"])
        try #require(made.status == 0, "\(made.stderr)")
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: hostile)))
        let claimed = try #require(HEIFItems.claimedBytes(bytes))
        #expect(claimed > 50 * 32 * 65536 && claimed < 50 * 32 * 65536 + bytes.count, "the region 1,600 times, and the photo: \(claimed)")
        expectFailure(bytes, .tooLarge, containing: "its items claim 100 MiB of data in a file of \(bytes.count) bytes")
        for name in try FileManager.default.contentsOfDirectory(atPath: Fixture.path("formats")) where name.hasSuffix(".heic") || name.hasSuffix(".avif") {
            let real = try Fixture.bytes("formats/\(name)")
            guard let claimed = HEIFItems.claimedBytes(real) else { continue }  // not a HEIF this reader understands
            #expect(claimed <= real.count, "\(name): \(claimed) of \(real.count) bytes")
        }
    }

    /// A fixture with the `ispe` that says `was` rewritten to say `width` × `height`.
    func declaring(width: UInt32, height: UInt32, in name: String = "formats/photo.heic", was: (UInt32, UInt32) = (2560, 1600)) throws -> [UInt8] {
        var bytes = try Fixture.bytes(name)
        let be = { (v: UInt32) -> [UInt8] in [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        let ispe = try #require(bytes.indices.dropLast(16).first { bytes[$0..<($0 + 4)].elementsEqual("ispe".utf8) && bytes[($0 + 8)..<($0 + 16)].elementsEqual(be(was.0) + be(was.1)) }, "\(name): no ispe of \(was)")
        bytes.replaceSubrange((ispe + 8)..<(ispe + 16), with: be(width) + be(height))
        return bytes
    }

    /// The same for AV1 (the largest frame of the sequence header, which libheif's encoder writes in the item's data, not
    /// in `av1C`), and for a grid whose canvas is larger than it declares (libheif allocates the canvas: a grid declared
    /// 64 × 64 over 16384 × 16320 held 1.6 GB).
    @Test func anAV1ImageOrAGridLargerThanDeclaredIsRefusedBeforeDecoding() throws {
        let avif = try declaring(width: 1279, height: 800, in: "formats/photo-8bit.avif", was: (1280, 800))
        expectFailure(avif, .tooLarge, containing: "image item 1 is coded as 1280 × 800 pixels where its header (ispe) says 1279 × 800")
        let grid = try declaring(width: 640, height: 400, in: "formats/grid.heic", was: (1280, 800))
        let lie = try #require(HEIFItems.gridLie(grid))
        #expect(lie.hasSuffix("makes a canvas of 1280 × 800 pixels where its header (ispe) says 640 × 400"), "\(lie)")
        expectFailure(grid, .tooLarge, containing: "makes a canvas of 1280 × 800 pixels")
        for name in ["photo-8bit.avif", "photo-10bit.avif", "nclx-display-p3.avif", "grid.heic"] {
            let bytes = try Fixture.bytes("formats/\(name)")
            #expect(HEIFItems.codedSizeLie(bytes) == nil && HEIFItems.gridLie(bytes) == nil, "\(name)")
        }
    }

    /// An HEVC image coded larger than its header (`ispe`) says — a tile declared 64 × 64 over 16384 × 16384 coded
    /// pixels was decoded whole, 1.6 GB, and a grid of them took minutes — is refused from its sequence parameter set
    /// before anything is decoded; the sizes real files code are their declared ones.
    @Test func anHEVCImageCodedLargerThanDeclaredIsRefusedBeforeDecoding() throws {
        for (width, height) in [(64, 64), (1600, 2560), (2560, 1599)] {
            let bytes = try declaring(width: UInt32(width), height: UInt32(height))
            let lie = HEIFItems.codedSizeLie(bytes)
            #expect(lie?.coded.width == 2560 && lie?.coded.height == 1600 && lie?.declared.width == width, "\(width) × \(height)")
            expectFailure(bytes, .tooLarge, containing: "image item 1 is coded as 2560 × 1600 pixels where its header (ispe) says \(width) × \(height)")
        }
        for name in ["photo.heic", "grid.heic", "ten-bit.heic", "with-depth.heic", "display-p3.heic", "irot-exif-contradicts.heic"] {
            #expect(HEIFItems.codedSizeLie(try Fixture.bytes("formats/\(name)")) == nil, "\(name)")
        }
    }

    /// Declared larger than coded (4000 × 2500 over a 2560 × 1600 bitstream): decoded, then refused — not the photo
    /// stretched to the declared shape, as it was.
    @Test func aHEIFWhoseDataIsNotItsDeclaredSizeIsRefused() throws {
        expectFailure(try declaring(width: 4000, height: 2500), .corrupt, containing: "the image data is 2560 × 1600 pixels where its header (ispe) says 4000 × 2500")
    }

    /// Compressed text chunks (zTXt, iTXt with its flag set) are not handed to libpng, which inflated each while reading
    /// the header (999 of them: 35 s); uncompressed text is; the pixels are the same. Of two iCCP chunks only the
    /// first is read (each was inflated, up to 16 MB apiece).
    @Test func compressedTextAndSecondProfilesAreNotInflated() throws {
        let rows: [[UInt8]] = (0..<16).map { y in (0..<16).flatMap { x -> [UInt8] in [UInt8(x * 16), UInt8(y * 16), 128] } }
        let plain = TestPNG.png(width: 16, height: 16, colorType: 2, rows: rows)
        let bomb = TestPNG.zlibStored([UInt8](repeating: 0, count: 60_000))
        let profile: [UInt8] = Array("the first profile".utf8), second: [UInt8] = Array("a second one".utf8)
        var extra: [UInt8] = []
        extra += TestPNG.chunk("iCCP", Array("first".utf8) + [0, 0] + TestPNG.zlibStored(profile))
        extra += TestPNG.chunk("iCCP", Array("second".utf8) + [0, 0] + TestPNG.zlibStored(second))
        extra += TestPNG.chunk("tEXt", Array("Comment".utf8) + [0] + Array("kept".utf8))
        extra += TestPNG.chunk("zTXt", Array("Comment".utf8) + [0, 0] + bomb)
        extra += TestPNG.chunk("iTXt", Array("XML".utf8) + [0, 1, 0, 0, 0] + bomb)
        extra += TestPNG.chunk("iTXt", Array("Plain".utf8) + [0, 0, 0, 0, 0] + Array("uncompressed".utf8))
        let hostile = TestPNG.png(width: 16, height: 16, colorType: 2, rows: rows, extra: extra)
        let structure = try PNGStructure.parse(hostile)
        #expect(structure.compressedText.count == 2 && structure.iccProfile == profile && structure.warnings.isEmpty)
        let handed = structure.withoutCompressedText(hostile)
        #expect(handed.count == hostile.count - 2 * (12 + bomb.count) - ("Comment".count + 2) - ("XML".count + 5))
        #expect(!handed.indices.dropLast(4).contains { handed[$0..<($0 + 4)].elementsEqual("zTXt".utf8) })
        #expect(try PNGStructure.parse(plain).withoutCompressedText(plain) == plain, "nothing to take out: the same bytes")
        let options = PrepareOptions(preset: .photo)
        let ours = try Decoder.decode(hostile, info: SourceInfo.read(hostile, maxPixels: .max), target: (16, 16), options: options).image
        let reference = try Decoder.decode(plain, info: SourceInfo.read(plain, maxPixels: .max), target: (16, 16), options: options).image
        #expect(ours.pixels == reference.pixels && ours.pixels.count == 16 * 16 * 3)
    }

    /// A PNG header's sizes are four bytes each, and their product overflowed `Int` in the refusal's message: one
    /// such upload trapped and stopped the server (found by mutating the fixtures). PNG allows 2³¹ − 1 each way: more
    /// is corrupt; as much is counted without overflow — refused by `prepare`, estimated by `probe`, which reads the
    /// header before any pixel limit.
    @Test func pngSizesAtTheFieldsLimitsAreRefusedWithoutOverflow() throws {
        func png(_ width: UInt32, _ height: UInt32) -> [UInt8] { TestPNG.declaring(width: width, height: height) }
        expectFailure(png(4_278_290_080, 4_294_901_760), .corrupt, containing: "the PNG declares 4278290080 × 4294901760 pixels; PNG allows at most 2147483647 each way")
        expectFailure(png(1, 0x8000_0000), .corrupt, containing: "PNG allows at most 2147483647 each way")
        let largest = png(0x7FFF_FFFF, 0x7FFF_FFFF)
        expectFailure(largest, .tooLarge, containing: "2147483647 × 2147483647 = 4611686014132420609 pixels is over the limit of 268402689 pixels")
        let probe = try PhotoPipeline(options: PrepareOptions(preset: .photo)).probe(largest)
        #expect(probe.width == 0x7FFF_FFFF && probe.height == 0x7FFF_FFFF)
        #expect(probe.plan.action.hasPrefix("refuse: 2147483647 × 2147483647"), "\(probe.plan.action)")
        #expect(PhotoPrepError.tooLarge(width: .max, height: .max, limit: 1).message.contains("= more than 18446744073709551615 pixels"))
        let estimate = MemoryEstimate(info: try SourceInfo.read(largest, maxPixels: .max), fileBytes: largest.count, scale: 1, target: (2048, 2048))
        #expect(estimate.bytes == .max && estimate.reason.contains("more than 2⁴⁰"))
    }

    /// A grid may give its canvas in 32-bit fields: 4294967295 × 4294967295, declared so by its `ispe` too, overflowed
    /// the check of its tiles' coverage and trapped (the same stop as the PNG above). Counted wide, it is libheif's
    /// security limit that refuses it.
    @Test func aGridDeclaringThirtyTwoBitSizesIsRefusedWithoutOverflow() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let hostile = folder.appendingPathComponent("huge-grid.heic").path
        let made = try await runSupportCommand(
            "python3", [Fixture.path("heif_boxes.py"), "grid", hostile, "4294967295", "4294967295", "3", "2", Fixture.path("formats/grid.heic")])
        try #require(made.status == 0, "\(made.stderr)")
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: hostile)))
        #expect(HEIFItems.gridLie(bytes) == nil, "no lie to see: canvas and ispe agree, and the tiles cover less")
        expectFailure(bytes, .tooLarge, containing: "Image size 4294967295x4294967295 exceeds the maximum image size 32768x32768")
        do {
            let probe = try PhotoPipeline(options: PrepareOptions(preset: .photo)).probe(bytes)
            Issue.record("probed: \(probe.plan.action)")
        } catch {
            #expect(error.kind == .tooLarge && error.message.contains("exceeds the maximum image size"), "\(error)")
        }
    }

    /// Images made of images: a grid that is its own tile, an `iden` of itself, two grids each the other's tile, an image
    /// that is its own alpha — libheif 1.15 follows each loop without end (a file under a megabyte made thousands of
    /// threads, then crashed the process) — and a chain of `iden` items deeper than four levels: refused from the boxes,
    /// before libheif reads them, by `prepare` and `probe` alike. Chains of two and four levels are real files and decode.
    @Test(arguments: [("grid", "made of itself"), ("iden", "made of itself"), ("cycle", "made of itself"), ("alpha", "made of itself"),
        ("chain5", "more than 4 levels deep"), ("chain100", "more than 4 levels deep")])
    func heifImagesMadeOfThemselvesAreRefused(kind: String, words: String) async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let hostile = folder.appendingPathComponent("\(kind).heic").path
        let made = try await runSupportCommand("python3", [Fixture.path("heif_boxes.py"), "loop", Fixture.path("formats/photo.heic"), hostile, kind])
        try #require(made.status == 0, "\(made.stderr)")
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: hostile)))
        expectFailure(bytes, .corrupt, containing: words)
        do {
            let probe = try PhotoPipeline(options: PrepareOptions(preset: .photo)).probe(bytes)
            Issue.record("probed: \(probe.plan.action)")
        } catch {
            #expect(error.kind == .corrupt && error.message.contains(words), "\(error)")
        }
    }

    @Test(arguments: ["chain2", "chain4"])
    func heifImagesMadeOfImagesWithinFourLevelsDecode(kind: String) async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("\(kind).heic").path
        let made = try await runSupportCommand("python3", [Fixture.path("heif_boxes.py"), "loop", Fixture.path("formats/photo.heic"), file, kind])
        try #require(made.status == 0, "\(made.stderr)")
        let original = try PhotoPipeline(options: PrepareOptions(preset: .photo)).prepare(try Fixture.bytes("formats/photo.heic"))
        let prepared = try PhotoPipeline(options: PrepareOptions(preset: .photo)).prepare(try [UInt8](Data(contentsOf: URL(fileURLWithPath: file))))
        #expect(prepared.report.outputWidth == original.report.outputWidth && prepared.report.outputHeight == original.report.outputHeight)
    }

    /// libwebp decodes a lossless WebP whole, as ARGB, at any scale, and a lossy one's alpha at full size: the
    /// estimate the memory budget admits photos by counts them (counted as scaled, a 16383² lossless file estimated
    /// at 13 MiB held 1.08 GB).
    @Test func webPEstimatesCountWhatLibwebpDecodesWhole() throws {
        for (name, perPixel) in [("formats/lossless.webp", 4), ("formats/alpha.webp", 2)] {
            let bytes = try Fixture.bytes(name)
            let info = try SourceInfo.read(bytes, maxPixels: .max)
            let estimate = MemoryEstimate(info: info, fileBytes: bytes.count, scale: 8, target: (16, 16), maxBytes: 500 << 10)
            #expect(estimate.bytes >= info.width * info.height * perPixel, "\(name): \(estimate.bytes) for \(info.width) × \(info.height)")
        }
    }
}
