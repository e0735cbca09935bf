import Foundation
import Testing
import TestSupport
@testable import PhotoPrep

@Suite struct QualityTargetTests {
    static let ladybird = "photos/ladybird-2560x1600.jpg"

    /// The photo as the pipeline resizes it before encoding: the pixels its score is measured against.
    static func resized(_ name: String, options: PrepareOptions) throws -> PixelImage {
        let bytes = try Fixture.bytes(name)
        let info = try SourceInfo.read(bytes, maxPixels: .max)
        let size = options.outputSize(width: info.width, height: info.height)
        let decoded = try Decoder.decode(bytes, info: info, target: size, options: options)
        return Resizer.resize(decoded.image, width: size.width, height: size.height)
    }

    static func prepare(_ name: String, _ preset: PrepareOptions.Preset, _ quality: QualityTarget, maxBytes: Int? = nil) throws -> PreparedPhoto {
        var options = PrepareOptions(preset: preset)
        options.quality = quality
        if let maxBytes { options.maxBytes = maxBytes }
        return try PhotoPipeline(options: options).prepare(contentsOf: Fixture.path(name))
    }

    @Test func theDefaultReachesItsScoreWithAFractionOfTheBytes() throws {
        let high = try Self.prepare(Self.ladybird, .group, .high)
        let max = try Self.prepare(Self.ladybird, .group, .max)
        let r = high.report
        #expect(PrepareOptions(preset: .group).quality == .high && r.target == "score:85")
        let score = try #require(r.score)
        #expect(score >= 85 && r.missedTarget == false)
        #expect(Double(high.jpeg.count) < 0.6 * Double(max.jpeg.count), "\(high.jpeg.count) vs \(max.jpeg.count) bytes")
        // The report's score is the output's, measured again from its bytes.
        let reference = try Self.resized(Self.ladybird, options: PrepareOptions(preset: .group))
        let measured = SSIMULACRA2.score(reference, try decodeJPEG(high.jpeg))
        #expect(abs(measured - score) < 0.01, "reported \(score), measured \(measured)")
        #expect(r.encodes <= 6)
    }

    @Test func higherTargetsCostMoreBytesAndScoreHigher() throws {
        let photos = try [QualityTarget.good, .high, .visuallyLossless].map { try Self.prepare("photos/storm-1920x1280.jpg", .profile, $0) }
        let scores = photos.map { $0.report.score ?? 0 }
        #expect(scores[0] >= 75 && scores[1] >= 85 && scores[2] >= 90, "\(scores)")
        #expect(photos[0].jpeg.count < photos[1].jpeg.count && photos[1].jpeg.count < photos[2].jpeg.count)
    }

    @Test func aFixedQualityIsThatQuality() throws {
        let photo = try Self.prepare(Self.ladybird, .profile, .fixed(70))
        #expect(photo.report.quality == 70 && photo.report.target == "q:70")
        #expect((photo.report.score ?? 0) > 50)
    }

    @Test func aBudgetTooSmallForTheTargetGetsTheBestScoreThatFits() throws {
        let budget = 60_000
        let photo = try Self.prepare(Self.ladybird, .group, .high, maxBytes: budget)
        let r = photo.report
        #expect(photo.jpeg.count < budget)
        #expect(r.missedTarget == true && (r.score ?? 100) < 85)
        #expect(r.warnings.contains { $0.contains("below the target") && $0.contains("byte budget") }, "\(r.warnings)")
        // The best score that fits: one quality up is over the budget (or the fit is within 2 % of it).
        let quality = try #require(r.quality)
        let reference = try Self.resized(Self.ladybird, options: PrepareOptions(preset: .group))
        let higher = try JPEGWriter.encode(reference, quality: quality + 1, settings: .init()) { $0.count }
        #expect(higher >= budget || Double(photo.jpeg.count) >= 0.98 * Double(budget) || r.outputWidth < 2048)
    }

    @Test(arguments: [
        "edge/grey.jpg", "edge/rgba-half-transparent.png", "edge/grey16-mid.png", "edge/rgb16-gradient.png", "edge/cmyk-photo.jpg",
        "edge/palette-trns.png", "formats/photo.heic", "edge/photo.webp",
    ])
    func oddPhotosComeOutWithinBudgetWithTheirScore(file: String) throws {
        let photo = try Self.prepare(file, .group, .high)
        let r = photo.report
        #expect(photo.jpeg.count < PrepareOptions(preset: .group).maxBytes)
        if r.action == .reencoded {
            let score = try #require(r.score, "\(file)")
            #expect(score >= 85 || r.missedTarget == true, "\(file): \(score)")
        }
        #expect(try decodeJPEG(photo.jpeg).width == r.outputWidth)
    }

    @Test func aOnePixelPhotoScores100() throws {
        let png = TestPNG.png(width: 1, height: 1, colorType: 2, rows: [[200, 30, 40]])
        let photo = try PhotoPipeline(preset: .profile).prepare(png)
        #expect(photo.report.score == 100 && photo.report.outputWidth == 1)
        let pixel = try decodeJPEG(photo.jpeg).rgb(x: 0, y: 0)
        #expect(abs(Int(pixel.0) - 200) < 8 && abs(Int(pixel.1) - 30) < 8 && abs(Int(pixel.2) - 40) < 8)
    }

    @Test func colourEdgesThat420CannotKeepAreWrittenAt444() throws {
        // One-pixel columns of saturated red and blue: 4:2:0 averages them into purple, whatever the quality.
        let width = 256, height = 128
        var rows: [[UInt8]] = []
        for _ in 0..<height { rows.append((0..<width).flatMap { $0 % 2 == 0 ? [220, 20, 30] : [20, 30, 220] as [UInt8] }) }
        let photo = try PhotoPipeline(preset: .profile).prepare(TestPNG.png(width: width, height: height, colorType: 2, rows: rows))
        let r = photo.report
        #expect(r.chroma == "4:4:4", "\(r)")
        #expect((r.score ?? 0) >= 85)
    }

    @Test func aFittingCameraJPEGIsReencodedWhenThatSavesATenthOrMore() throws {
        // A high-quality JPEG that already fits the profile preset (1024 px, under 500 KiB).
        let reference = try Self.resized(Self.ladybird, options: PrepareOptions(preset: .profile))
        let camera = try JPEGWriter.encode(reference, quality: 97, settings: .init()) { Array($0) }
        #expect(camera.count < 500 * 1024)
        let high = try PhotoPipeline(preset: .profile).prepare(camera)
        #expect(high.report.action == .reencoded && Double(high.jpeg.count) <= 0.9 * Double(camera.count))
        #expect((high.report.score ?? 0) >= 85)
        let filling = try Self.prepare(Self.ladybird, .profile, .max)
        #expect(filling.report.action == .reencoded)  // the 2560 px original must shrink: nothing to pass through
        var options = PrepareOptions(preset: .profile)
        options.quality = .max
        #expect(try PhotoPipeline(options: options).prepare(camera).report.action == .passedThrough)
    }

    @Test func thumbnailsAreEncodedForTheTargetToo() throws {
        var options = PrepareOptions(preset: .photo)
        options.thumbnails = [512, 128]
        let photo = try PhotoPipeline(options: options).prepare(contentsOf: Fixture.path(Self.ladybird))
        #expect(photo.thumbnails.count == 2)
        for thumbnail in photo.thumbnails {
            #expect((thumbnail.score ?? 0) >= 85, "\(thumbnail.edge): \(String(describing: thumbnail.score))")
            #expect(try decodeJPEG(thumbnail.jpeg).width == thumbnail.width)
        }
    }

    @Test func targetsAreReadByNameNumberOrScore() {
        #expect(QualityTarget("high") == .score(85) && QualityTarget("visually-lossless") == .score(90))
        #expect(QualityTarget("good") == .score(75) && QualityTarget("max") == .max)
        #expect(QualityTarget("72") == .fixed(72) && QualityTarget("score:88.5") == .score(88.5))
        for bad in ["0", "101", "score:20", "score:x", "High", ""] { #expect(QualityTarget(bad) == nil, "\(bad)") }
        #expect(QualityTarget.high.description == "high (SSIMULACRA2 85)")
    }
}
