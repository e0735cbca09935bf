import Foundation
import Testing
@testable import PhotoPrep
import TestSupport

/// Square avatar thumbnails: the largest square of the photo, centred on the client's focal point, else on what the
/// attention rule picks, else the centre; never enlarged. Checked on pixels: a marker painted where the crop must go.
@Suite struct SquareCropTests {
    /// `image` with a `size` × `size` block of pure magenta centred on (`x`, `y`).
    static func marked(_ image: PixelImage, x: Int, y: Int, size: Int = 24) -> PixelImage {
        var marked = image
        for py in max(0, y - size / 2)..<min(image.height, y + size / 2) {
            for px in max(0, x - size / 2)..<min(image.width, x + size / 2) {
                let i = (py * image.width + px) * 3
                (marked.pixels[i], marked.pixels[i + 1], marked.pixels[i + 2]) = (255, 0, 255)
            }
        }
        return marked
    }

    /// Pixels of `image` that are nearly pure magenta.
    static func magenta(_ image: PixelImage) -> Int {
        (0..<image.width * image.height).filter { i in
            let (r, g, b) = image.rgb(x: i % image.width, y: i / image.width)
            return r > 200 && g < 80 && b > 200
        }.count
    }

    static func prepare(_ image: PixelImage, sides: [Int], focus: FocalPoint?) throws -> PreparedPhoto {
        var options = PrepareOptions(preset: .photo)
        options.thumbnails = sides
        options.squareThumbnails = true
        options.focus = focus
        let png = try JPEGWriter.encode(image, quality: 95, settings: .init(fullChroma: true)) { Array($0) }
        return try PhotoPipeline(options: options).prepare(png)
    }

    /// A real photo marked near its left edge: centred on a focal point there, every square holds the mark; the same
    /// photo centred by the rule on its own (storm's interest is not there) does not.
    @Test(arguments: [(-0.85, 0.0), (0.9, -0.5), (0.0, 0.95)])
    func theSquareContainsTheFocalPoint(focus: (Double, Double)) throws {
        let photo = try decodeJPEG(try Fixture.bytes("photos/storm-1920x1280.jpg"))
        let point = try #require(FocalPoint(x: focus.0, y: focus.1))
        let x = Int(point.fraction.x * Double(photo.width)), y = Int(point.fraction.y * Double(photo.height))
        let prepared = try Self.prepare(Self.marked(photo, x: x, y: y, size: 60), sides: [256, 64], focus: point)
        #expect(prepared.report.squareCrop?.rule == .focus)
        for thumbnail in prepared.thumbnails {
            let image = try decodeJPEG(thumbnail.jpeg)
            #expect(image.width == thumbnail.edge && image.height == thumbnail.edge, "square: \(image.width)×\(image.height)")
            #expect(Self.magenta(image) > 0, "\(focus) \(thumbnail.edge): the focal point is in the square")
        }
        // Focused on the other side (left or right: a landscape photo's square is its whole height), the square misses it.
        guard abs(focus.0) > 0.5 else { return }
        let opposite = try Self.prepare(Self.marked(photo, x: x, y: y, size: 60), sides: [256], focus: try #require(FocalPoint(x: -focus.0, y: focus.1)))
        #expect(Self.magenta(try decodeJPEG(opposite.thumbnails[0].jpeg)) == 0, "the opposite side does not hold it")
    }

    /// Nobody said: a grey photo with one saturated, edged patch near its right edge is cropped over the patch; a flat one
    /// from its centre.
    @Test func theAttentionRuleFindsTheInterestingPart() throws {
        let (w, h) = (900, 300)
        var pixels = [UInt8](repeating: 128, count: w * h * 3)
        for y in 120..<180 {
            for x in 800..<860 {
                let i = (y * w + x) * 3
                (pixels[i], pixels[i + 1], pixels[i + 2]) = (230, 20, 40)
            }
        }
        let patched = try Self.prepare(PixelImage(width: w, height: h, channels: 3, pixels: pixels), sides: [128], focus: nil)
        let crop = try #require(patched.report.squareCrop)
        #expect(crop.rule == .attention && crop.x > 0.75, "\(crop)")
        let thumbnail = try decodeJPEG(patched.thumbnails[0].jpeg)
        let (r, g, _) = thumbnail.rgb(x: thumbnail.width * 5 / 6, y: thumbnail.height / 2)
        #expect(r > 180 && g < 80, "the red patch is in the square")

        let flat = try Self.prepare(PixelImage(width: w, height: h, channels: 3, pixels: [UInt8](repeating: 90, count: w * h * 3)), sides: [128], focus: nil)
        #expect(flat.report.squareCrop?.rule == .centre && flat.report.squareCrop?.x == 0.5, "\(String(describing: flat.report.squareCrop))")
    }

    /// A photo smaller than the side asked for: the largest square it has, not enlarged.
    @Test func aSmallPhotoGivesItsLargestSquare() throws {
        let small = PixelImage(width: 100, height: 60, channels: 3, pixels: (0..<(100 * 60 * 3)).map { UInt8($0 % 251) })
        let prepared = try Self.prepare(small, sides: [256, 128, 32], focus: nil)
        #expect(prepared.thumbnails.map(\.edge) == [32, 128, 256])
        #expect(prepared.thumbnails.map(\.width) == [32, 60, 60] && prepared.thumbnails.map(\.height) == [32, 60, 60])
    }

    /// A JPEG kept as it is gets its squares from the decode that checked it, at a scale that still covers them.
    @Test func aPassedThroughPhotoGetsFullSizedSquares() throws {
        var options = PrepareOptions(preset: .photo)
        options.quality = .max
        (options.thumbnails, options.squareThumbnails) = ([300], true)
        let photo = try PhotoPipeline(options: options).prepare(contentsOf: Fixture.path("photos/storm-1920x1280.jpg"))
        #expect(photo.report.action != .reencoded)
        #expect(photo.thumbnails.first?.width == 300 && photo.thumbnails.first?.height == 300)
    }

    @Test(arguments: [("0,0", true), ("-1,1", true), (" 0.5 , -0.25 ", true), ("1.01,0", false), ("0", false), ("a,b", false), ("0,0,0", false), ("nan,0", false), ("", false), ("1e0,-1e0", true), ("0x1,0", false)])
    func focalPointsAreReadStrictly(text: String, valid: Bool) {
        #expect((FocalPoint(parsing: text) != nil) == valid, "\(text)")
    }
}
