import Foundation
import Synchronization
import Testing
@testable import PhotoPrep
import TestSupport

@Suite struct PhotoPipelineTests {
    /// The pipeline filling the budget (`--quality max`): the highest quality that fits, a fitting JPEG kept as it is.
    static func filling(_ preset: PrepareOptions.Preset) -> PhotoPipeline {
        var options = PrepareOptions(preset: preset)
        options.quality = .max
        return PhotoPipeline(options: options)
    }

    static let everyPreparableFixture = [
        "photos/storm-1920x1280.jpg", "photos/ladybird-2560x1600.jpg", "edge/progressive.jpg", "edge/arithmetic.jpg",
        "edge/grey.jpg", "edge/cmyk-photo.jpg", "edge/cmyk-patches.jpg", "edge/truncated.jpg", "edge/with-icc-and-gps.jpg",
        "edge/grey16-mid.png", "edge/rgb16-gradient.png", "edge/palette-trns.png", "edge/interlaced.png",
        "edge/rgba-half-transparent.png", "edge/animated.png", "edge/exif-orientation-6.png",
    ] + (1...8).map { "orientation/landscape_\($0).jpg" }

    @Test(arguments: PrepareOptions.Preset.allCases)
    func everyOutputIsUnderBudgetNeverLargerAndDecodes(preset: PrepareOptions.Preset) throws {
        let pipeline = PhotoPipeline(preset: preset)
        for file in Self.everyPreparableFixture {
            let photo = try pipeline.prepare(contentsOf: Fixture.path(file))
            let r = photo.report
            #expect(photo.jpeg.count < pipeline.options.maxBytes, "\(file)")
            #expect(r.outputBytes == photo.jpeg.count)
            #expect(max(r.outputWidth, r.outputHeight) <= pipeline.options.maxEdge, "\(file)")
            #expect(max(r.outputWidth, r.outputHeight) <= max(r.sourceWidth, r.sourceHeight), "\(file) grew")
            let image = try decodeJPEG(photo.jpeg)
            #expect(image.width == r.outputWidth && image.height == r.outputHeight, "\(file)")
            let output = try JPEGStructure.parse(photo.jpeg)
            #expect(output.exif == nil, "\(file) still carries EXIF")
        }
    }

    @Test func bindingBudgetPicksTheLargestFittingQuality() throws {
        let pipeline = Self.filling(.group)
        let photo = try pipeline.prepare(contentsOf: Fixture.path("photos/ladybird-2560x1600.jpg"))
        let r = photo.report
        #expect(r.outputWidth == 2048 && r.outputHeight == 1280)
        #expect(r.action == .reencoded)
        let quality = try #require(r.quality)
        #expect(quality < 100, "the 500 KiB budget binds for this photo at 2048 px")
        #expect(r.encodes >= 2 && r.encodes <= 5)
        // Re-encode the same pixels one quality higher: it must miss, or the fit was within 5 %.
        let bytes = try Fixture.bytes("photos/ladybird-2560x1600.jpg")
        let info = try SourceInfo.read(bytes, maxPixels: .max)
        let decoded = try Decoder.decode(bytes, info: info, target: (2048, 1280), options: pipeline.options)
        let resized = Resizer.resize(decoded.image, width: 2048, height: 1280)
        let higher = try JPEGWriter.encode(resized, quality: quality + 1, settings: .init()) { $0.count }
        #expect(higher >= 512_000 || Double(photo.jpeg.count) >= 0.95 * 512_000)
        // And the output is a faithful copy of the photo.
        #expect(lumaPSNR(try decodeJPEG(photo.jpeg), resized) > 35)
    }

    @Test func unbindingBudgetCostsOneEncode() throws {
        let photo = try Self.filling(.photo).prepare(contentsOf: Fixture.path("photos/ladybird-2560x1600.jpg"))
        #expect(photo.report.encodes == 1)
        #expect(photo.report.quality == 100)
    }

    @Test func unreachableBudgetIsAClearError() throws {
        let options = PrepareOptions(maxEdge: 2048, maxBytes: 2_048)
        let error = #expect(throws: PhotoPrepError.self) {
            try PhotoPipeline(options: options).prepare(contentsOf: Fixture.path("photos/storm-1920x1280.jpg"))
        }
        #expect(error?.kind == .budgetUnreachable)
        #expect(error?.stage == .encode)
        #expect(error?.message.contains("over the budget of 2048 bytes") == true)
    }

    @Test func tightBudgetShrinksTheDimensions() throws {
        let options = PrepareOptions(maxEdge: 2048, maxBytes: 25_000)
        let photo = try PhotoPipeline(options: options).prepare(contentsOf: Fixture.path("photos/storm-1920x1280.jpg"))
        #expect(photo.jpeg.count < 25_000)
        #expect(photo.report.missedTarget == true)
        #expect(photo.report.outputWidth < 1920)
        let aspect = Double(photo.report.outputWidth) / Double(photo.report.outputHeight)
        #expect(abs(aspect - 1.5) < 0.01)
        #expect(try decodeJPEG(photo.jpeg).width == photo.report.outputWidth)
    }

    @Test func fittingJPEGWithoutMetadataPassesThroughUntouched() throws {
        let source = try Fixture.bytes("edge/progressive.jpg")
        let photo = try Self.filling(.group).prepare(source)
        #expect(photo.report.action == .passedThrough)
        #expect(photo.jpeg == source)
        #expect(photo.report.encodes == 0)
    }

    @Test func metadataIsStrippedLosslesslyAndTheICCProfileKept() throws {
        let source = try Fixture.bytes("edge/with-icc-and-gps.jpg")
        let sourceStructure = try JPEGStructure.parse(source)
        #expect(sourceStructure.exif != nil && sourceStructure.iccProfile != nil)
        let photo = try Self.filling(.group).prepare(source)
        #expect(photo.report.action == .metadataStripped)
        #expect(photo.report.sourceHasGPS)
        let output = try JPEGStructure.parse(photo.jpeg)
        #expect(output.exif == nil)
        #expect(output.iccProfile == sourceStructure.iccProfile)
        #expect(!output.segments.contains { $0.marker == 0xE1 || $0.marker == 0xFE }, "no EXIF, XMP or comment")
        #expect(try decodeJPEG(photo.jpeg) == decodeJPEG(source), "pixels untouched")
        #expect(photo.jpeg.count < source.count)
    }

    /// A photo that is passed through keeps its ICC profile only when it is one: APP2 `ICC_PROFILE` segments holding
    /// 400 KB of HTML, a real profile whose header claims another size, or a profile's chunks numbered twice go with the
    /// other metadata, with a warning, the pixels untouched — the real profile beside them stays byte for byte.
    @Test func aPassedThroughPhotoKeepsOnlyARealICCProfile() throws {
        let source = try Fixture.bytes("edge/progressive.jpg")
        let profile = try #require(try JPEGStructure.parse(try Fixture.bytes("edge/with-icc-and-gps.jpg")).iccProfile)
        func with(_ segments: [UInt8]) -> [UInt8] { source.withUnsafeBytes { JPEGSegments.inserting(segments, into: $0) } }
        func chunk(_ data: ArraySlice<UInt8>, _ sequence: UInt8, of count: UInt8) -> [UInt8] {
            let length = 2 + 14 + data.count
            return [0xFF, 0xE2, UInt8(length >> 8), UInt8(length & 0xFF)] + Array("ICC_PROFILE\0".utf8) + [sequence, count] + data
        }
        var lying = profile
        lying[3] &+= 1  // the header's size, one more than the profile
        let html = Array(String(repeating: "<script>alert(1)</script>", count: 16_000).utf8)
        let cases: [(String, [UInt8])] = [
            ("400 KB of HTML", try #require(JPEGSegments.iccSegments(html))),
            ("a size that is not its own", try #require(JPEGSegments.iccSegments(lying))),
            ("chunks numbered 1 of 2 twice", chunk(profile[..<(profile.count / 2)], 1, of: 2) + chunk(profile[(profile.count / 2)...], 1, of: 2)),
        ]
        for (what, segments) in cases {
            let photo = try Self.filling(.group).prepare(with(segments))
            #expect(photo.report.action == .metadataStripped, "\(what)")
            #expect(try JPEGStructure.parse(photo.jpeg).iccProfile == nil && !photo.report.keptColorProfile, "\(what)")
            #expect(!photo.jpeg.contains(0xE2) || !String(decoding: photo.jpeg, as: UTF8.self).contains("ICC_PROFILE"), "\(what)")
            #expect(photo.report.warnings.contains { $0.contains("ICC profile") && $0.contains("dropped") }, "\(what): \(photo.report.warnings)")
            #expect(try decodeJPEG(photo.jpeg) == decodeJPEG(source), "\(what): pixels untouched")
        }
        let real = with(try #require(JPEGSegments.iccSegments(profile)))
        let kept = try Self.filling(.group).prepare(real)
        #expect(kept.report.action == .passedThrough && kept.jpeg == real && kept.report.warnings.isEmpty)
    }

    /// A FIFO named like a photo is refused as not a regular file, at once: opening it for reading waited for a writer
    /// that never came (a batch hung on it). A writer comes here five seconds later, so that a regression fails this test
    /// instead of hanging it: the answer must come before the writer does.
    @Test func aFIFONamedLikeAPhotoIsRefusedWithoutWaiting() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let fifo = folder.appendingPathComponent("x.jpg").path
        try #require(mkfifo(fifo, 0o600) == 0)
        let writerCame = Atomic<Bool>(false)
        let writer = Thread {
            Thread.sleep(forTimeInterval: 5)
            writerCame.store(true, ordering: .sequentiallyConsistent)
            let fd = open(fifo, O_WRONLY | O_NONBLOCK)
            if fd >= 0 { close(fd) }
        }
        writer.start()
        let pipeline = PhotoPipeline(options: PrepareOptions(preset: .photo))
        #expect(pipeline.header(contentsOf: fifo) == nil)
        do {
            _ = try pipeline.prepare(contentsOf: fifo)
            Issue.record("a FIFO was prepared")
        } catch {
            #expect(error.message.contains("not a regular file") && error.file == fifo, "\(error)")
        }
        let waited = writerCame.load(ordering: .sequentiallyConsistent)
        #expect(!waited, "the answer waited for a writer")
    }

    @Test func reencodedOutputKeepsTheICCProfileUnlessStrippingAll() throws {
        let source = try Fixture.bytes("edge/with-icc-and-gps.jpg")
        let profile = try JPEGStructure.parse(source).iccProfile
        var options = PrepareOptions(maxEdge: 240, maxBytes: 500 * 1024)
        let kept = try PhotoPipeline(options: options).prepare(source)
        #expect(kept.report.action == .reencoded && kept.report.keptColorProfile)
        #expect(try JPEGStructure.parse(kept.jpeg).iccProfile == profile)
        options.metadata = .none
        let stripped = try PhotoPipeline(options: options).prepare(source)
        #expect(try JPEGStructure.parse(stripped.jpeg).iccProfile == nil)
        #expect(!stripped.report.keptColorProfile)
        options.allowPassThrough = true
        options.maxEdge = 2048
        options.quality = .max  // kept as it is, not encoded for a score
        let strippedPass = try PhotoPipeline(options: options).prepare(source)
        #expect(strippedPass.report.action == .metadataStripped)
        #expect(try JPEGStructure.parse(strippedPass.jpeg).iccProfile == nil)
    }

    @Test func cmykOutputIsRGBWithoutTheCMYKMarker() throws {
        let photo = try PhotoPipeline(preset: .group).prepare(contentsOf: Fixture.path("edge/cmyk-photo.jpg"))
        #expect(photo.report.action == .reencoded, "CMYK is never passed through")
        let output = try JPEGStructure.parse(photo.jpeg)
        #expect(output.components == 3 && output.adobeTransform == nil)
    }

    @Test func transparentPNGTurnsWhiteInTheJPEG() throws {
        let photo = try PhotoPipeline(preset: .group).prepare(contentsOf: Fixture.path("edge/rgba-half-transparent.png"))
        let image = try decodeJPEG(photo.jpeg)
        #expect(close(image.mean(x: 4..<36, y: 26..<38), (255, 255, 255), within: 3))
        #expect(close(image.mean(x: 4..<36, y: 2..<14), (0, 200, 0), within: 6))
    }

    @Test func sixteenBitGreyStaysMidGreyThroughTheWholePipeline() throws {
        let photo = try PhotoPipeline(preset: .group).prepare(contentsOf: Fixture.path("edge/grey16-mid.png"))
        let image = try decodeJPEG(photo.jpeg)
        #expect(image.channels == 1)
        #expect(image.pixels.allSatisfy { abs(Int($0) - 128) <= 1 })
    }

    @Test func concurrentCallsGiveTheSameBytesAsSequentialOnes() async throws {
        let pipeline = PhotoPipeline(preset: .profile)
        let files = ["photos/storm-1920x1280.jpg", "photos/ladybird-2560x1600.jpg", "edge/cmyk-photo.jpg", "edge/interlaced.png"]
        let sequential = try files.map { try pipeline.prepare(contentsOf: Fixture.path($0)).jpeg }
        let concurrent = try await withThrowingTaskGroup(of: (Int, [UInt8]).self) { group in
            for (i, file) in (files + files).enumerated() {
                group.addTask { (i % files.count, try pipeline.prepare(contentsOf: Fixture.path(file)).jpeg) }
            }
            return try await group.reduce(into: [(Int, [UInt8])]()) { $0.append($1) }
        }
        #expect(concurrent.count == 8)
        for (i, jpeg) in concurrent { #expect(jpeg == sequential[i]) }
    }

    @Test func reportNamesStagesAndTimes() throws {
        let r = try PhotoPipeline(preset: .profile).prepare(contentsOf: Fixture.path("photos/ladybird-2560x1600.jpg")).report
        #expect(r.sourceFormat == .jpeg && r.sourceWidth == 2560 && r.sourceHeight == 1600)
        #expect(r.outputWidth == 1024 && r.outputHeight == 640)
        #expect(r.decodeScale == 1)  // a half-size decode (1280 px) leaves less than the 1.5× margin for 1024
        #expect(r.timings.decode > 0 && r.timings.resize > 0 && r.timings.encode > 0)
        #expect(r.timings.total >= r.timings.decode + r.timings.resize + r.timings.encode)
    }
}
