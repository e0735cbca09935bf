import Testing
@testable import PhotoPrep
import TestSupport

@Suite struct OrientationTests {
    /// Orientations 1–8 were made losslessly from one upright photo: after `prepare`, each must match
    /// the upright one, be 640 × 400, carry no orientation tag and no GPS — both when the JPEG is
    /// turned upright losslessly and when its pixels are decoded, oriented and re-encoded.
    @Test(arguments: 1...8, [true, false])
    func everyOrientationComesOutUpright(orientation: Int, lossless: Bool) throws {
        var options = PrepareOptions(preset: .group)
        options.allowPassThrough = lossless
        options.quality = .max  // a fitting JPEG is kept (turned losslessly), not encoded for a score
        let pipeline = PhotoPipeline(options: options)
        let upright = try decodeFixture("orientation/landscape_1.jpg")
        let photo = try pipeline.prepare(contentsOf: Fixture.path("orientation/landscape_\(orientation).jpg"))
        #expect(photo.report.sourceOrientation == orientation)
        #expect(photo.report.sourceHasGPS)
        if lossless {
            #expect(photo.report.action == (orientation == 1 ? .metadataStripped : .losslesslyOriented))
        } else {
            #expect(photo.report.action == .reencoded)
        }
        let image = try decodeJPEG(photo.jpeg)
        #expect(image.width == 640 && image.height == 400)
        #expect(photo.report.outputWidth == 640 && photo.report.outputHeight == 400)
        #expect(lumaDifference(image, upright) < (lossless ? 0.5 : 2.5), "orientation \(orientation) is not upright")

        let output = try JPEGStructure.parse(photo.jpeg)
        #expect(output.exif == nil, "no EXIF (so no orientation tag and no GPS) in the output")
        #expect(!output.segments.contains { $0.marker == 0xE1 }, "no APP1 (EXIF or XMP) segment")
    }

    @Test func aWrongOrientationWouldBeCaught() throws {
        // The similarity threshold above really separates orientations: a mirrored photo is far off.
        let upright = try decodeFixture("orientation/landscape_1.jpg")
        let mirrored = Orientation.mirrored.apply(to: upright)
        #expect(lumaDifference(mirrored, upright) > 10)
    }

    @Test func pngEXIfOrientationIsApplied() throws {
        let photo = try PhotoPipeline(preset: .group).prepare(contentsOf: Fixture.path("edge/exif-orientation-6.png"))
        let image = try decodeJPEG(photo.jpeg)
        #expect(image.width == 40 && image.height == 60)
        #expect(close(image.mean(x: 5..<35, y: 2..<16), (255, 0, 0), within: 12), "red band on top")
        #expect(close(image.mean(x: 5..<35, y: 30..<58), (0, 0, 255), within: 12))
    }

    @Test(arguments: Orientation.allCases)
    func applyMatchesTheTableOfSourcePixels(orientation: Orientation) {
        // A 3 × 2 grey image whose pixel values are their indices.
        let source = PixelImage(width: 3, height: 2, channels: 1, pixels: [0, 1, 2, 3, 4, 5])
        let out = orientation.apply(to: source)
        let (w, h) = (3, 2)
        for oy in 0..<out.height {
            for ox in 0..<out.width {
                let (sx, sy): (Int, Int) = switch orientation {
                case .up: (ox, oy)
                case .mirrored: (w - 1 - ox, oy)
                case .rotated180: (w - 1 - ox, h - 1 - oy)
                case .flippedVertically: (ox, h - 1 - oy)
                case .transposed: (oy, ox)
                case .rotated90Clockwise: (oy, h - 1 - ox)
                case .transverse: (w - 1 - oy, h - 1 - ox)
                case .rotated90CounterClockwise: (w - 1 - oy, ox)
                }
                #expect(out.pixels[oy * out.width + ox] == UInt8(sy * w + sx))
            }
        }
        #expect(out.width == (orientation.swapsDimensions ? 2 : 3) && out.height == (orientation.swapsDimensions ? 3 : 2))
    }
}
