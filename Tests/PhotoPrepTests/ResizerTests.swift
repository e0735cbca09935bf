import Foundation
import Testing
@testable import PhotoPrep
import TestSupport

/// The plain, bounds-checked reference for `Resizer`'s SIMD passes: same weights, same fixed-point
/// arithmetic, one output sample at a time.
enum ReferenceResizer {
    static func resize(_ image: PixelImage, width: Int, height: Int) -> PixelImage {
        var result = image
        let c = image.channels
        if width != image.width {
            let filter = Lanczos3Filter(inputSize: image.width, outputSize: width)
            var out = [UInt8](repeating: 0, count: width * c * image.height)
            for y in 0..<image.height {
                for x in 0..<width {
                    for ch in 0..<c {
                        var acc = Lanczos3Filter.one >> 1
                        for k in 0..<filter.counts[x] {
                            acc += Int32(image.pixels[(y * image.width + filter.starts[x] + k) * c + ch]) * filter.weights[x * filter.taps + k]
                        }
                        out[(y * width + x) * c + ch] = Resizer.clamp(acc)
                    }
                }
            }
            result = PixelImage(width: width, height: image.height, channels: c, pixels: out)
        }
        if height != image.height {
            let filter = Lanczos3Filter(inputSize: image.height, outputSize: height)
            let stride = result.width * c
            var out = [UInt8](repeating: 0, count: stride * height)
            for y in 0..<height {
                for x in 0..<stride {
                    var acc = Lanczos3Filter.one >> 1
                    for k in 0..<filter.counts[y] {
                        acc += Int32(result.pixels[(filter.starts[y] + k) * stride + x]) * filter.weights[y * filter.taps + k]
                    }
                    out[y * stride + x] = Resizer.clamp(acc)
                }
            }
            result = PixelImage(width: result.width, height: height, channels: c, pixels: out)
        }
        return result
    }
}

@Suite struct ResizerTests {
    @Test(arguments: [(480, 320, 200, 133), (480, 320, 479, 319), (480, 320, 97, 61), (480, 320, 480, 100), (480, 320, 17, 320), (480, 320, 61, 13)])
    func simdPassesMatchTheScalarReference(inW: Int, inH: Int, outW: Int, outH: Int) throws {
        let photo = try decodeFixture("edge/progressive.jpg")
        #expect(photo.width == inW && photo.height == inH)
        #expect(Resizer.resize(photo, width: outW, height: outH) == ReferenceResizer.resize(photo, width: outW, height: outH))
        let grey = try decodeFixture("edge/grey.jpg")
        #expect(Resizer.resize(grey, width: outW, height: outH) == ReferenceResizer.resize(grey, width: outW, height: outH))
        // The horizontal pass works on strips of 8 rows: 317 rows end with a strip of 5.
        for image in [photo, grey] {
            let rows = 317, stride = image.width * image.channels
            let cropped = PixelImage(width: image.width, height: rows, channels: image.channels, pixels: Array(image.pixels[..<(rows * stride)]))
            let height = min(outH, rows)
            #expect(Resizer.resize(cropped, width: outW, height: height) == ReferenceResizer.resize(cropped, width: outW, height: height))
        }
    }

    /// Hard black and white bands ring past 0 and 255 under Lanczos3's negative lobes, in both passes: the SIMD
    /// passes clamp those samples exactly as the reference does.
    @Test(arguments: [(61, 37), (90, 50), (23, 90)])
    func ringingIsClampedAsTheReferenceClampsIt(outW: Int, outH: Int) {
        let width = 96, height = 96
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width where (y / 5 + x / 7) % 2 == 0 {
                pixels[(y * width + x) * 3] = 255
                pixels[(y * width + x) * 3 + 2] = 255
            }
        }
        let bands = PixelImage(width: width, height: height, channels: 3, pixels: pixels)
        let resized = Resizer.resize(bands, width: outW, height: outH)
        #expect(resized == ReferenceResizer.resize(bands, width: outW, height: outH))
        #expect(resized.pixels.contains(0) && resized.pixels.contains(255))
    }

    @Test func flatImagesStayFlat() {
        let flat = PixelImage(width: 301, height: 203, channels: 3, pixels: [UInt8](repeating: 77, count: 301 * 203 * 3))
        let small = Resizer.resize(flat, width: 64, height: 43)
        #expect(Set(small.pixels) == [77])
    }

    @Test func weightsSumToOneWithinRounding() {
        for (input, output) in [(4032, 1024), (1000, 999), (3, 1), (2048, 2048)] {
            let filter = Lanczos3Filter(inputSize: input, outputSize: output)
            for i in 0..<output {
                let sum = (0..<filter.counts[i]).reduce(Int32(0)) { $0 + filter.weights[i * filter.taps + $1] }
                #expect(abs(sum - Lanczos3Filter.one) <= Int32(filter.counts[i]), "rounding each weight moves the sum by < 1 unit per tap")
            }
        }
    }

    /// sinc(x) · sinc(x / 3) on −3 ≤ x < 3, with two sines, as Pillow computes it.
    static func lanczos3(_ x: Double) -> Double {
        func sinc(_ x: Double) -> Double { x == 0 ? 1 : sin(Double.pi * x) / (Double.pi * x) }
        guard x >= -3 && x < 3 else { return 0 }
        return sinc(x) * sinc(x / 3)
    }

    /// The filter takes each tap's sine from the one before (a rotation); the weights it rounds are those of
    /// sinc(x) · sinc(x / 3) computed tap by tap with two sines, as Pillow computes them.
    @Test func weightsAreThoseOfTheDirectFormula() {
        let sizes = [(4032, 2048), (4032, 1024), (5640, 2048), (1024, 512), (683, 341), (1365, 683), (1000, 999), (3, 1), (10, 25), (2048, 2048), (7, 3)]
        for (input, output) in sizes {
            let filter = Lanczos3Filter(inputSize: input, outputSize: output)
            let scale = Double(input) / Double(output), stretch = max(scale, 1)
            var differing = 0
            for i in 0..<output {
                let center = (Double(i) + 0.5) * scale
                let lo = max(0, Int(center - 3 * stretch + 0.5))
                let direct = (0..<filter.counts[i]).map { Self.lanczos3((Double(lo + $0) - center + 0.5) / stretch) }
                let sum = direct.reduce(0, +)
                for (k, w) in direct.enumerated() {
                    let fixed = w / (sum == 0 ? 1 : sum) * Double(Lanczos3Filter.one)
                    if Int32(fixed < 0 ? fixed - 0.5 : fixed + 0.5) != filter.weights[i * filter.taps + k] { differing += 1 }
                }
                #expect(filter.starts[i] == lo)
            }
            #expect(differing == 0, "\(input) → \(output): \(differing) weights differ from the direct formula's")
        }
    }

    /// The benchmarks measure quality against Pillow's Lanczos: on a real photo we match it almost exactly.
    @Test func matchesPillowsLanczosOnARealPhoto() throws {
        let full = try decodeFixture("edge/photo-rgb8.png")
        let pillow = try decodeFixture("edge/photo-rgb8-pillow-lanczos-200x133.png")
        let ours = Resizer.resize(full, width: 200, height: 133)
        let differences = zip(ours.pixels, pillow.pixels).map { abs(Int($0) - Int($1)) }
        #expect(differences.max()! <= 1)
        #expect(Double(differences.filter { $0 > 0 }.count) / Double(differences.count) < 0.01)
    }

    @Test func downscaledPhotoIsCloseToAFullResolutionDownscale() throws {
        // Shrink-on-load + Lanczos3 against Lanczos3 from full resolution, on a real photo.
        let fullDecode = try decodeFixture("photos/ladybird-2560x1600.jpg")
        let reference = Resizer.resize(fullDecode, width: 640, height: 400)
        let bytes = try Fixture.bytes("photos/ladybird-2560x1600.jpg")
        let info = try SourceInfo.read(bytes, maxPixels: .max)
        let quarter = try Decoder.decodeJPEG(bytes, info: info, scale: 2, strict: false).image
        let viaShrink = Resizer.resize(quarter, width: 640, height: 400)
        #expect(lumaPSNR(viaShrink, reference) > 38)
    }

    /// A thumbnail at a quarter of the size or less: each 2 × 2 block averaged (rounding half up; an odd last row or
    /// column with itself), then Lanczos3 — pixel for pixel what the plain reference makes of the plainly averaged
    /// image. 101 × 97 RGB: both the last column and the last row have no pair.
    @Test func aThumbnailAveragesBlocksThenResamples() {
        let image = PixelImage(width: 101, height: 97, channels: 3, pixels: testBytes(101 * 97 * 3, seed: 97))
        func sample(_ x: Int, _ y: Int, _ c: Int) -> Int { Int(image.pixels[(min(y, 96) * 101 + min(x, 100)) * 3 + c]) }
        var boxes = [UInt8]()
        for y in stride(from: 0, to: 97, by: 2) {
            for x in stride(from: 0, to: 101, by: 2) {
                for c in 0..<3 {
                    boxes.append(UInt8((sample(x, y, c) + sample(x + 1, y, c) + sample(x, y + 1, c) + sample(x + 1, y + 1, c) + 2) / 4))
                }
            }
        }
        let expected = ReferenceResizer.resize(PixelImage(width: 51, height: 49, channels: 3, pixels: boxes), width: 25, height: 24)
        #expect(Resizer.thumbnail(image, width: 25, height: 24) == expected)
        #expect(Resizer.thumbnail(image, width: 50, height: 24) == Resizer.resize(image, width: 50, height: 24), "under 4:1 the filter reads every pixel")
    }

    /// On a real photo the averaged blocks change little: within half a level on average of Lanczos3 from every pixel.
    @Test func aThumbnailIsCloseToTheResizeFromEveryPixel() throws {
        let photo = try decodeFixture("photos/ladybird-2560x1600.jpg")
        let thumbnail = Resizer.thumbnail(photo, width: 512, height: 320)
        let direct = Resizer.resize(photo, width: 512, height: 320)
        let difference = Double(zip(thumbnail.pixels, direct.pixels).map { abs(Int($0) - Int($1)) }.reduce(0, +)) / Double(direct.pixels.count)
        #expect(difference < 0.5 && thumbnail != direct, "\(difference)")
        #expect(lumaPSNR(thumbnail, direct) > 40, "\(lumaPSNR(thumbnail, direct)) dB")
    }

    @Test func outputSizeComesFromTheOriginalDimensions() {
        let options = PrepareOptions(preset: .group)
        #expect(options.outputSize(width: 4032, height: 3024) == (2048, 1536))
        #expect(options.outputSize(width: 3024, height: 4032) == (1536, 2048))
        #expect(options.outputSize(width: 5640, height: 3172) == (2048, 1152))
        #expect(options.outputSize(width: 1000, height: 800) == (1000, 800), "never upscaled")
        #expect(options.outputSize(width: 100_000, height: 10) == (2048, 1))
    }
}
