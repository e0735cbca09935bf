import Testing
@testable import PhotoPrep
import TestSupport

@Suite struct ImageFormatTests {
    @Test func recognisesEachFormatByContent() throws {
        #expect(try ImageFormat.sniff(Fixture.bytes("photos/storm-1920x1280.jpg")) == .jpeg)
        #expect(try ImageFormat.sniff(Fixture.bytes("edge/photo-rgb8.png")) == .png)
        #expect(try ImageFormat.sniff(Fixture.bytes("edge/photo.webp")) == .webp, "Pillow's WebP")
        #expect(try ImageFormat.sniff(Fixture.bytes("formats/photo.heic")) == .heif)
        #expect(try ImageFormat.sniff(Fixture.bytes("formats/photo-8bit.avif")) == .avif)
    }

    @Test(arguments: [
        ("edge/photo.gif", "GIF"), ("edge/photo.tiff", "TIFF"),
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

    /// A supported format cut off or damaged in its first bytes is a photo that failed (corrupt), never a file skipped
    /// as another format: a JPEG's start marker alone or followed by no marker, a WebP's header alone or without an image
    /// chunk, an ISO media file cut before its brand.
    @Test(arguments: [
        ([0xFF, 0xD8], "truncated"), ([0xFF, 0xD8, 0, 0, 0, 0], "no marker after its start"),
        (Array("RIFF".utf8) + [4, 0, 0, 0] + Array("WEBP".utf8), "truncated"),
        (Array("RIFF".utf8) + [8, 0, 0, 0] + Array("WEBPXXXX".utf8), "no VP8"),
        ([0, 0, 0, 24] + Array("ftyp".utf8), "truncated"),
    ] as [([UInt8], String)])
    func aDamagedStartIsCorruptNotAnotherFormat(bytes: [UInt8], words: String) throws {
        let error = #expect(throws: PhotoPrepError.self) { try PhotoPipeline(preset: .group).prepare(bytes) }
        #expect(error?.kind == .corrupt && error?.stage == .sniff, "\(String(describing: error))")
        #expect(error?.message.contains(words) == true, "\(error?.message ?? "")")
    }

    @Test func describesOtherISOMediaAndUnknownBinary() throws {
        let heic: [UInt8] = [0, 0, 0, 24] + Array("ftypheic".utf8) + [0, 0, 0, 0]
        #expect(try ImageFormat.sniff(heic) == .heif)
        let mp4: [UInt8] = [0, 0, 0, 24] + Array("ftypmp42".utf8) + [0, 0, 0, 0]
        #expect(ImageFormat.describe(mp4).contains("ISO media file of brand \"mp42\""))
        #expect(ImageFormat.describe([0x00, 0x01, 0xFE, 0x80]).contains("00 01 FE 80"))
    }
}
