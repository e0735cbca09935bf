import Foundation
import Testing
@testable import PhotoPrep
import TestSupport

/// JPEGs decoded from their files row by row (libjpeg's scanline API, `Decoder.decodeJPEG(file:…)`), the rows
/// going straight into the resizer: the same pixels as TurboJPEG's whole-image decode followed by the resizer,
/// the same warnings and errors, and the file's bytes let go of before the decode.
@Suite struct RowDecodeTests {
    /// What the whole-image path makes: TurboJPEG at `scale`, then `Resizer.resize` to `target`.
    func wholeImage(_ name: String, scale: Int, target: (width: Int, height: Int)) throws -> PixelImage {
        let bytes = try Fixture.bytes(name)
        let info = try SourceInfo.read(bytes, maxPixels: .max)
        let decoded = try Decoder.decodeJPEG(bytes, info: info, scale: scale, strict: false).image
        return Resizer.resize(decoded, width: target.width, height: target.height)
    }

    func rows(_ name: String, scale: Int, target: (width: Int, height: Int), strict: Bool = false) throws -> Decoder.Decoded {
        let info = try SourceInfo.read(try Fixture.bytes(name), maxPixels: .max)
        var decoded = try Decoder.decodeJPEG(file: Fixture.path(name), info: info, scale: scale, target: target, strict: strict)
        decoded.image = Resizer.resize(decoded.image, width: target.width, height: target.height)  // when not fused
        return decoded
    }

    @Test(arguments: [
        ("photos/ladybird-2560x1600.jpg", 1, (2048, 1280)),  // baseline, both ways: fused
        ("photos/ladybird-2560x1600.jpg", 2, (1000, 625)),  // at 1/2, fused
        ("photos/storm-1920x1280.jpg", 8, (240, 160)),  // at 1/8 exactly: no resize
        ("photos/storm-1920x1280.jpg", 1, (1920, 1000)),  // one dimension only: the decoded image, then resized
        ("edge/progressive.jpg", 1, (300, 200)),  // progressive
        ("edge/progressive-410.jpg", 1, (200, 133)),  // 4:1:0 sampling, which TurboJPEG's header call has no name for
        ("edge/grey.jpg", 2, (100, 67)),  // one channel
        ("edge/arithmetic.jpg", 1, (333, 222)),  // arithmetic coding
    ])
    func sameImageAsTheWholeImagePath(name: String, scale: Int, target: (Int, Int)) throws {
        let streamed = try rows(name, scale: scale, target: target).image
        let whole = try wholeImage(name, scale: scale, target: target)
        #expect(streamed.width == target.0 && streamed.height == target.1)
        #expect(streamed == whole, "\(name) at 1/\(scale) → \(target)")
    }

    @Test func aTruncatedFileDecodesAsFarAsItGoesWithLibjpegsWarning() throws {
        let decoded = try rows("edge/truncated.jpg", scale: 1, target: (100, 80))
        #expect(decoded.warnings == ["libjpeg-turbo: Premature end of JPEG file"])
        let strict = #expect(throws: PhotoPrepError.self) { try rows("edge/truncated.jpg", scale: 1, target: (100, 80), strict: true) }
        #expect(strict?.kind == .corrupt && strict?.message == "libjpeg-turbo: Premature end of JPEG file")
    }

    @Test func aFileChangedBetweenReadingAndDecodingIsRefused() throws {
        let info = try SourceInfo.read(try Fixture.bytes("photos/storm-1920x1280.jpg"), maxPixels: .max)
        let error = #expect(throws: PhotoPrepError.self) {
            try Decoder.decodeJPEG(file: Fixture.path("photos/ladybird-2560x1600.jpg"), info: info, scale: 2, target: (480, 320), strict: false)
        }
        #expect(error?.message.contains("the file changed while it was being read: its frame is now 1280 × 800 at 1/2") == true, "\(String(describing: error))")
    }

    @Test func garbageAfterTheHeaderIsLibjpegsError() throws {
        // A real header, then the entropy-coded data replaced by a marker libjpeg cannot take.
        let bytes = try Fixture.bytes("photos/storm-1920x1280.jpg")
        let info = try SourceInfo.read(bytes, maxPixels: .max)
        let scan = info.jpeg!.scanStart
        var broken = Array(bytes[..<scan])
        broken += [0xFF, 0xC3, 0x00, 0x02]  // a lossless frame header where the scan belongs
        let file = try temporaryFolder().appendingPathComponent("broken.jpg")
        try Data(broken).write(to: file)
        let error = #expect(throws: PhotoPrepError.self) {
            try Decoder.decodeJPEG(file: file.path, info: info, scale: 1, target: (960, 640), strict: false)
        }
        #expect(error?.kind == .corrupt && error?.message.hasPrefix("libjpeg-turbo: ") == true, "\(String(describing: error))")
    }

    @Test func theFileBytesAreLetGoOfForAJPEGAndKeptForOtherFormats() throws {
        let pipeline = PhotoPipeline(preset: .profile)
        var jpeg = try Fixture.bytes("photos/ladybird-2560x1600.jpg")
        let fromFile = try pipeline.prepare(taking: &jpeg, file: Fixture.path("photos/ladybird-2560x1600.jpg"))
        #expect(jpeg.isEmpty, "the pipeline decoded from the file and emptied the bytes")
        let fromBytes = try pipeline.prepare(try Fixture.bytes("photos/ladybird-2560x1600.jpg"))
        #expect(fromFile.jpeg == fromBytes.jpeg, "the same output either way")
        #expect(fromFile.report.outputWidth == 1024 && fromFile.report.decodeScale == 1)

        var png = try Fixture.bytes("edge/photo-rgb8.png")
        let count = png.count
        _ = try pipeline.prepare(taking: &png, file: Fixture.path("edge/photo-rgb8.png"))
        #expect(png.count == count, "a PNG is decoded from its bytes")
    }
}
