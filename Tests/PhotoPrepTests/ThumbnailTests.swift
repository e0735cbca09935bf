import Foundation
import Testing
@testable import PhotoPrep
import TestSupport

/// Thumbnails come with the prepared photo: each asked-for long edge, upright, the photo's pixels scaled
/// down — whether the photo was re-encoded or passed through without decoding.
@Suite struct ThumbnailTests {
    /// Mean absolute difference per sample between two images of the same size.
    static func difference(_ a: PixelImage, _ b: PixelImage) -> Double {
        precondition(a.width == b.width && a.height == b.height && a.channels == b.channels)
        var total = 0
        for i in a.pixels.indices { total += abs(Int(a.pixels[i]) - Int(b.pixels[i])) }
        return Double(total) / Double(a.pixels.count)
    }

    @Test(arguments: ["photos/ladybird-2560x1600.jpg", "orientation/landscape_6.jpg", "edge/rgba-half-transparent.png"])
    func eachEdgeIsThePhotoScaledDown(file: String) throws {
        var options = PrepareOptions(preset: .group)
        options.thumbnails = [256, 128, 4096]
        let photo = try PhotoPipeline(options: options).prepare(contentsOf: Fixture.path(file))
        #expect(photo.thumbnails.map(\.edge) == [128, 256, 4096])
        let full = try decodeJPEG(photo.jpeg)
        for thumbnail in photo.thumbnails {
            let image = try decodeJPEG(thumbnail.jpeg)
            #expect(image.width == thumbnail.width && image.height == thumbnail.height, "\(file) \(thumbnail.edge)")
            #expect(max(image.width, image.height) == min(thumbnail.edge, max(full.width, full.height)), "\(file) \(thumbnail.edge): never larger than the photo")
            // The same picture, the same way up: the photo scaled down to its size is close to it.
            #expect((full.width > full.height) == (image.width > image.height) || full.width == full.height)
            let scaled = Resizer.resize(full, width: image.width, height: image.height)
            #expect(Self.difference(scaled, image) < 6, "\(file) \(thumbnail.edge): \(Self.difference(scaled, image))")
        }
        // Another picture scaled to the same size is far from it: the check can fail.
        let mine = try decodeJPEG(photo.thumbnails[0].jpeg)
        let other = Resizer.resize(try decodeJPEG(try Fixture.bytes("photos/storm-1920x1280.jpg")), width: mine.width, height: mine.height)
        #expect(Self.difference(other, mine) > 20, "\(Self.difference(other, mine))")
    }

    /// A JPEG that already fits is passed through untouched; its thumbnails are made all the same.
    /// WebP beside each JPEG when one reaches the JPEG's score in fewer bytes: decoded (by libwebp and by `dwebp`, the
    /// reference tool) it is the thumbnail's size and scores at least the JPEG's against the same pixels; a photo
    /// with a colour profile gets it in the WebP's container too. Where none reaches it, none is made.
    @Test(arguments: ["photos/storm-1920x1280.jpg", "formats/display-p3.heic", "photos/ladybird-2560x1600.jpg"])
    func webpThumbnailsAreTheSamePictureInFewerBytes(file: String) async throws {
        for target in [QualityTarget.high, .good] {
            var options = PrepareOptions(preset: .photo)
            options.thumbnails = [512, 256]
            options.webpThumbnails = true
            options.quality = target
            let photo = try PhotoPipeline(options: options).prepare(contentsOf: Fixture.path(file))
            #expect(photo.report.thumbnails?.map(\.webpBytes) == photo.thumbnails.map { $0.webp?.count })
            let timings = photo.report.timings  // the WebPs' time is part of the thumbnails', which is part of the whole
            #expect(timings.webp > 0 && timings.webp < timings.thumbnails && timings.thumbnails < timings.total)
            for thumbnail in photo.thumbnails {
                guard let webp = thumbnail.webp else {
                    #expect(thumbnail.webpScore == nil && thumbnail.webpQuality == nil)
                    continue
                }
                #expect(webp.count < thumbnail.jpeg.count && (thumbnail.webpScore ?? 0) >= (thumbnail.score ?? 100) - TargetSearch(target: 0, qualities: 50...100, limit: 0).tolerance)
                let decoded = try #require(LibWebPEncoder.decodeRGB(webp, width: thumbnail.width, height: thumbnail.height), "\(file) \(thumbnail.edge)")
                let jpeg = try decodeJPEG(thumbnail.jpeg)
                #expect(Self.difference(decoded, jpeg) < 4, "\(file) \(thumbnail.edge): the same picture")
                let structure = try LibWebPDecoder.structure(webp)
                #expect((structure.iccProfile != nil) == photo.report.keptColorProfile, "\(file): the profile goes with the pixels")
                // dwebp (Debian's webp) reads it too.
                let folder = try temporaryFolder()
                defer { try? FileManager.default.removeItem(at: folder) }
                let input = folder.appendingPathComponent("t.webp"), output = folder.appendingPathComponent("t.ppm")
                try Data(webp).write(to: input)
                let dwebp = try await runSupportCommand("dwebp", [input.path, "-ppm", "-o", output.path])
                #expect(dwebp.status == 0, "\(dwebp.stderr)")
                let header = String(decoding: try Data(contentsOf: output).prefix(20), as: UTF8.self).split(whereSeparator: \.isWhitespace)
                #expect(header.count >= 3 && header[1] == "\(thumbnail.width)" && header[2] == "\(thumbnail.height)", "\(header)")
            }
        }
    }

    /// The storm photo's 512 px WebP reaches its JPEG's score in fewer bytes (the check above has something to check).
    @Test func stormsAlbumThumbnailHasAWebP() throws {
        var options = PrepareOptions(preset: .photo)
        options.thumbnails = [512]
        options.webpThumbnails = true
        let photo = try PhotoPipeline(options: options).prepare(contentsOf: Fixture.path("photos/storm-1920x1280.jpg"))
        #expect(photo.thumbnails.first?.webp != nil)
        options.webpThumbnails = false
        #expect(try PhotoPipeline(options: options).prepare(contentsOf: Fixture.path("photos/storm-1920x1280.jpg")).thumbnails.first?.webp == nil)
    }

    @Test func aPassedThroughPhotoHasThumbnailsToo() throws {
        var options = PrepareOptions(preset: .photo)
        options.quality = .max  // kept as it is
        options.thumbnails = [200]
        let photo = try PhotoPipeline(options: options).prepare(contentsOf: Fixture.path("orientation/landscape_1.jpg"))
        #expect(photo.report.action != .reencoded)
        let thumbnail = try #require(photo.thumbnails.first)
        let full = try decodeJPEG(photo.jpeg)
        let image = try decodeJPEG(thumbnail.jpeg)
        #expect(max(image.width, image.height) == min(200, max(full.width, full.height)))
        #expect(Self.difference(Resizer.resize(full, width: image.width, height: image.height), image) < 6)
    }

    /// A photo passed through is decoded once, for the check that it decodes cleanly and for its thumbnails: they
    /// are, byte for byte, those made from its output decoded on its own at their scale.
    @Test func aPassedThroughPhotosThumbnailsComeFromTheCheckingDecode() throws {
        var options = PrepareOptions(preset: .photo)
        options.quality = .max  // kept as it is
        options.thumbnails = [512, 100]
        let photo = try PhotoPipeline(options: options).prepare(contentsOf: Fixture.path("photos/storm-1920x1280.jpg"))
        #expect(photo.report.action != .reencoded && !photo.report.keptColorProfile)
        let info = try SourceInfo.read(photo.jpeg, maxPixels: options.maxPixels)
        var small = options
        small.maxEdge = 512
        let plan = DecodePlan(info: info, fileBytes: photo.jpeg.count, target: small.outputSize(width: info.width, height: info.height), options: small)
        #expect(plan.scale == 2)  // 960 × 640 covers 512 × 341; 1/4 would not (the check alone decodes at 1/8)
        let decoded = try Decoder.decode(photo.jpeg, info: info, plan: plan, options: options).image
        var report = photo.report
        let expected = try Thumbnails.make(from: decoded, options: options, extraSegments: [], iccProfile: nil, report: &report)
        #expect(photo.thumbnails.map(\.edge) == [100, 512])
        let same = photo.thumbnails.map(\.jpeg) == expected.map(\.jpeg)
        #expect(same, "the thumbnails differ from those of the output decoded on its own")
    }

    @Test func noneUnlessAskedFor() throws {
        #expect(try PhotoPipeline(preset: .group).prepare(contentsOf: Fixture.path("photos/storm-1920x1280.jpg")).thumbnails.isEmpty)
    }
}
