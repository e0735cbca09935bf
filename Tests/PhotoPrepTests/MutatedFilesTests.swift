import Foundation
import Testing
@testable import PhotoPrep
import TestSupport

/// Hostile files the way a fuzzer makes them: committed fixtures of every format with bytes flipped, cut short,
/// repeated, set to boundary values (0, 0xFF, 0x7FFF_FFFF in lengths and sizes), or copied from elsewhere in the file.
/// Each one, through the pipeline as the server runs it (with thumbnails), either prepares — a JPEG within the
/// preset's edge and budget, thumbnails as listed — or fails with a `PhotoPrepError` that says what is wrong. A crash,
/// a hang or a trap in any codec ends the test run. The mutants are the same on every run (a seeded generator).
@Suite struct MutatedFilesTests {
    static let seeds = [
        "edge/progressive.jpg", "edge/grey.jpg", "edge/cmyk-photo.jpg", "orientation/landscape_6.jpg",
        "edge/interlaced.png", "edge/palette-trns.png", "edge/rgb16-gradient.png",
        "formats/lossy.webp", "formats/alpha.webp", "formats/photo-8bit.avif", "formats/photo.heic",
    ]

    static func mutated(_ original: [UInt8], _ random: inout SeededGenerator) -> [UInt8] {
        var bytes = original
        let n = bytes.count
        switch Int.random(in: 0..<6, using: &random) {
        case 0:  // bytes flipped anywhere
            for _ in 0..<Int.random(in: 1...16, using: &random) { bytes[Int.random(in: 0..<n, using: &random)] = .random(in: 0...255, using: &random) }
        case 1:  // cut short
            bytes.removeLast(n - Int.random(in: 1..<n, using: &random))
        case 2:  // a run repeated in place
            let start = Int.random(in: 0..<n, using: &random), end = min(n, start + Int.random(in: 1...64, using: &random))
            let run = Array(bytes[start..<end])
            bytes.insert(contentsOf: repeatElement(run, count: Int.random(in: 1...8, using: &random)).joined(), at: start)
        case 3:  // boundary values where lengths and sizes live, little- or big-endian alike
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                let at = Int.random(in: 0..<max(1, n - 4), using: &random)
                let value = [0, 1, 0x7F, 0x80, 0xFF, 0xFFFF, 0x7FFF_FFFF, 0xFFFF_FFFF][Int.random(in: 0..<8, using: &random)]
                for i in 0..<[1, 2, 4][Int.random(in: 0..<3, using: &random)] where at + i < n { bytes[at + i] = UInt8(truncatingIfNeeded: value >> (8 * i)) }
            }
        case 4:  // bytes flipped in the headers
            for _ in 0..<Int.random(in: 1...8, using: &random) { bytes[Int.random(in: 0..<min(n, 2048), using: &random)] = .random(in: 0...255, using: &random) }
        default:  // eight bytes copied from elsewhere in the file
            let to = Int.random(in: 0..<n, using: &random), from = Int.random(in: 0..<n, using: &random)
            for i in 0..<8 where to + i < n && from + i < n { bytes[to + i] = original[from + i] }
        }
        return bytes
    }

    @Test(arguments: seeds)
    func eachMutantPreparesOrFailsWithAReason(seed file: String) throws {
        let original = try Fixture.bytes(file)
        var options = PrepareOptions(preset: .profile)
        options.thumbnails = [256, 128]
        let pipeline = PhotoPipeline(options: options)
        var random = SeededGenerator(state: UInt64(truncatingIfNeeded: file.utf8.reduce(5381) { $0 &* 33 &+ Int($1) }))
        var prepared = 0, failed = 0
        for index in 0..<40 {
            let bytes = Self.mutated(original, &random)
            let photo: PreparedPhoto
            do throws(PhotoPrepError) {
                photo = try pipeline.prepare(bytes)
            } catch {
                #expect(!error.message.isEmpty, "\(file) #\(index): \(error)")
                failed += 1
                continue
            }
            let image = try decodeJPEG(photo.jpeg)
            #expect(max(image.width, image.height) <= options.maxEdge && photo.jpeg.count <= options.maxBytes, "\(file) #\(index)")
            #expect(photo.thumbnails.map(\.edge) == [128, 256], "\(file) #\(index)")
            for thumbnail in photo.thumbnails {
                let small = try decodeJPEG(thumbnail.jpeg)
                #expect(small.width == thumbnail.width && small.height == thumbnail.height, "\(file) #\(index)")
            }
            prepared += 1
        }
        // Mutations that changed nothing would prove nothing: some of every seed's mutants must be refused.
        #expect(failed > 0, "\(file): \(prepared) prepared, none refused")
    }
}
