import Foundation
@testable import PhotoPrep
import TestSupport

/// Decodes a JPEG at full size through the pipeline's own decoder (TurboJPEG).
func decodeJPEG(_ bytes: [UInt8]) throws -> PixelImage {
    let info = try SourceInfo.read(bytes, maxPixels: .max)
    return try Decoder.decodeJPEG(bytes, info: info, scale: 1, strict: false).image
}

/// Decodes any supported file at full size, without orientation or resizing.
func decodeFixture(_ name: String, background: RGBColor = .white) throws -> PixelImage {
    let bytes = try Fixture.bytes(name)
    let info = try SourceInfo.read(bytes, maxPixels: .max)
    var options = PrepareOptions(maxEdge: .max, maxBytes: .max)
    options.background = background
    return try Decoder.decode(bytes, info: info, target: (info.width, info.height), options: options).image
}

extension PixelImage {
    /// Rec. 601 luma of every pixel.
    var luma: [Double] {
        (0..<(width * height)).map { i in
            if channels == 1 { return Double(pixels[i]) }
            return 0.299 * Double(pixels[i * 3]) + 0.587 * Double(pixels[i * 3 + 1]) + 0.114 * Double(pixels[i * 3 + 2])
        }
    }

    /// The average colour of a rectangle.
    func mean(x: Range<Int>, y: Range<Int>) -> (Double, Double, Double) {
        var sum = (0.0, 0.0, 0.0)
        for yy in y {
            for xx in x {
                let (r, g, b) = rgb(x: xx, y: yy)
                sum.0 += Double(r); sum.1 += Double(g); sum.2 += Double(b)
            }
        }
        let n = Double(x.count * y.count)
        return (sum.0 / n, sum.1 / n, sum.2 / n)
    }
}

/// Mean absolute luma difference of two images of the same size (0 = identical, 255 = opposite).
func lumaDifference(_ a: PixelImage, _ b: PixelImage) -> Double {
    precondition(a.width == b.width && a.height == b.height, "sizes differ: \(a.width)×\(a.height) vs \(b.width)×\(b.height)")
    let la = a.luma, lb = b.luma
    return zip(la, lb).reduce(0) { $0 + abs($1.0 - $1.1) } / Double(la.count)
}

/// Peak signal-to-noise ratio of the luma of two images of the same size, in dB.
func lumaPSNR(_ a: PixelImage, _ b: PixelImage) -> Double {
    let la = a.luma, lb = b.luma
    let mse = zip(la, lb).reduce(0) { $0 + ($1.0 - $1.1) * ($1.0 - $1.1) } / Double(la.count)
    return mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
}

func close(_ a: (Double, Double, Double), _ b: (Double, Double, Double), within tolerance: Double) -> Bool {
    abs(a.0 - b.0) <= tolerance && abs(a.1 - b.1) <= tolerance && abs(a.2 - b.2) <= tolerance
}
