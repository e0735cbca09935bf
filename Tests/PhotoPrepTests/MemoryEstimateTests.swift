import Foundation
import Testing
@testable import PhotoPrep
import TestSupport

/// `MemoryEstimate` against what a real `photoprep prepare` holds: the server admits photos by these estimates
/// (`MemoryBudget`), so one that errs high leaves a core idle and one that errs low breaks the memory bound.
@Suite struct MemoryEstimateTests {
    /// A progressive 4:4:4 photo of 5120 × 1600 (the bundled 2560 × 1600 photo twice, side by side) prepared for a
    /// 2560 px long edge: decoded at 1/2, exactly that size, so nothing is resized. libjpeg holds every coefficient
    /// (49 MB), then the decoded image (6 MB); the encode comes after. Measured as the peak resident memory of
    /// `photoprep bench` preparing it, less that of the same command on a tiny photo.
    @Test func aProgressivePhotosEstimateIsWhatItsPrepareHolds() async throws {
        let photo = try decodeJPEG(Fixture.bytes("photos/ladybird-2560x1600.jpg"))
        var pixels = [UInt8]()
        pixels.reserveCapacity(photo.pixels.count * 2)
        let row = photo.width * 3
        for y in 0..<photo.height {
            let line = photo.pixels[(y * row)..<((y + 1) * row)]
            pixels += line
            pixels += line
        }
        let wide = PixelImage(width: photo.width * 2, height: photo.height, channels: 3, pixels: pixels)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("estimate-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let big = folder.appendingPathComponent("wide-progressive.jpg").path
        try Data(progressiveJPEG(rgb: wide.pixels, width: wide.width, height: wide.height, quality: 90, fullChroma: true)).write(to: URL(fileURLWithPath: big))

        var options = PrepareOptions(preset: .photo)
        options.maxEdge = 2560
        options.shrinkOnLoadMargin = 1  // Pillow's draft rule: a half-size decode covers the output
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: big)))
        let info = try SourceInfo.read(bytes, maxPixels: .max)
        #expect(info.jpeg?.coding == .progressive)
        let target = options.outputSize(width: info.width, height: info.height)
        let plan = DecodePlan(info: info, fileBytes: bytes.count, target: target, options: options, fromFile: true)
        #expect(plan.scale == 2 && plan.streamed && target == (2560, 800))

        // `photoprep bench` prints its own peak (VmHWM), in MB.
        func peak(_ file: String, _ extra: String...) async throws -> Int {
            let run = try await photoprep(["bench", file, "--runs", "1", "--max-edge", "2560", "--preset", "photo"] + extra)
            let line = try #require(run.stdout.split(separator: "\n").first { $0.contains("peak memory") }, "\(run.stdout)\(run.stderr)")
            return try #require(Int(line.split(separator: " ").dropLast().last ?? ""), "\(line)")
        }
        // The baseline: a small photo at a fixed quality, whose encode keeps no scoring reference (a small photo's score
        // search keeps one: `ScoringReference`, 7 MB at 480 × 320).
        let (whole, small) = (try await peak(big), try await peak(Fixture.path("edge/progressive.jpg"), "--quality", "85"))
        let held = (whole - small) * 1_000_000
        let ratio = Double(plan.estimate.bytes) / Double(held)
        #expect(ratio > 0.9 && ratio < 1.2, "estimated \(plan.estimate.bytes >> 20) MiB, held \(held >> 20) MiB (peaks \(whole) and \(small) MB)")
    }

    /// Counted one phase at a time: a photo turned by its EXIF orientation adds its turned copy to the encode, and
    /// a resize both ways needs the rows' ring, not the decoded image.
    @Test func thePhasesCountOneAtATime() throws {
        let bytes = try Fixture.bytes("photos/ladybird-2560x1600.jpg")
        let info = try SourceInfo.read(bytes, maxPixels: .max)
        let options = PrepareOptions(preset: .photo)
        let target = options.outputSize(width: info.width, height: info.height)
        let estimate = MemoryEstimate(info: info, fileBytes: bytes.count, scale: 1, target: target, maxBytes: options.maxBytes)
        let resized = target.width * target.height * 3
        let decoded = info.width * info.height * 3
        // Decoded whole from memory: the file, then the decoded image, the horizontal pass and the result (the largest phase).
        #expect(estimate.bytes == bytes.count + decoded + target.width * info.height * 3 + resized)
        let rows = MemoryEstimate(info: info, fileBytes: bytes.count, scale: 1, target: target, streamed: true, maxBytes: options.maxBytes)
        #expect(rows.bytes < resized * 3, "rows into the resizer: the ring and the result, or the encode — \(rows.bytes)")
        var turned = info
        turned.exif.orientation = .rotated90Clockwise
        let turnedRows = MemoryEstimate(info: turned, fileBytes: bytes.count, scale: 1, target: target, streamed: true, maxBytes: options.maxBytes)
        #expect(turnedRows.bytes == max(rows.bytes, 2 * resized + min(resized, 3 * options.maxBytes)))
    }

    /// A score search keeps its reference when it is small (`ScoringReference`): the photo's, or its largest
    /// thumbnail's (at most its edge each way) — counted in the encode, and not at a fixed quality.
    @Test func aScoreSearchsKeptReferenceIsCounted() throws {
        var options = PrepareOptions(preset: .photo)
        let small = ScoringReference.keptBytes(width: 480, height: 320)
        #expect(small > 480 * 320 * 36, "every scale")
        #expect(DecodePlan.keptReference(target: (480, 320), options: options) == small)
        #expect(DecodePlan.keptReference(target: (1024, 640), options: options) == 0, "a photo's own search streams")
        options.thumbnails = [256, 512]
        #expect(DecodePlan.keptReference(target: (1024, 640), options: options) == ScoringReference.keptBytes(width: 512, height: 512))
        options.quality = .fixed(85)
        #expect(DecodePlan.keptReference(target: (480, 320), options: options) == 0)

        // A 480 × 320 photo, whose encode outweighs its decode: its estimate holds the kept reference.
        let bytes = try Fixture.bytes("edge/progressive.jpg")
        let info = try SourceInfo.read(bytes, maxPixels: .max)
        let fixed = DecodePlan(info: info, fileBytes: bytes.count, target: (480, 320), options: options).estimate.bytes
        let scored = DecodePlan(info: info, fileBytes: bytes.count, target: (480, 320), options: PrepareOptions(preset: .photo)).estimate.bytes
        #expect(scored > fixed && scored >= small && scored <= fixed + small)
    }
}
