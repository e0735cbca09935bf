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

    /// A valid-looking 16383 × 16383 RGB PNG header: 805 MB decoded, over the default 256 MiB.
    @Test func aHugePNGIsRefusedByTheMemoryBudget() throws {
        let png = Self.signature + Self.ihdr(width: 16383, height: 16383) + Self.chunk("IDAT", [0x78, 0x9C, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01]) + Self.chunk("IEND", [])
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
