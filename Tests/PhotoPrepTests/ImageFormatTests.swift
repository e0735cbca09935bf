import Testing
@testable import PhotoPrep

@Suite struct ImageFormatTests {
    @Test func recognisesJPEGAndPNGByContent() throws {
        #expect(try ImageFormat.sniff(Fixture.bytes("photos/storm-1920x1280.jpg")) == .jpeg)
        #expect(try ImageFormat.sniff(Fixture.bytes("edge/photo-rgb8.png")) == .png)
    }

    @Test(arguments: [
        ("edge/photo.webp", "WebP"), ("edge/photo.gif", "GIF"), ("edge/photo.tiff", "TIFF"),
        ("edge/not-an-image.txt", "text"), ("edge/empty.jpg", "empty"),
    ])
    func refusesOtherFormatsSayingWhatWasFound(file: String, found: String) throws {
        let pipeline = PhotoPipeline(preset: .group)
        let error = #expect(throws: PhotoPrepError.self) { try pipeline.prepare(contentsOf: Fixture.path(file)) }
        #expect(error?.kind == .unsupportedFormat)
        #expect(error?.stage == .sniff)
        #expect(error?.message.contains(found) == true, "\(error?.message ?? "")")
        #expect(error?.description.contains(file) == true, "the error names the file")
    }

    @Test func describesHEICAndUnknownBinary() {
        let heic: [UInt8] = [0, 0, 0, 24] + Array("ftypheic".utf8) + [0, 0, 0, 0]
        #expect(ImageFormat.describe(heic).contains("HEIF"))
        #expect(ImageFormat.describe([0x00, 0x01, 0xFE, 0x80]).contains("00 01 FE 80"))
    }
}
