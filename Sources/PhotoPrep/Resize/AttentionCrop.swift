#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a crop should be centred when nobody said: libvips' `attention` rule (`vips_smartcrop`, which imgproxy's
/// `gravity:sm` and sharp's `attention` use), written here from its description. In CIELAB: the edges (Sobel on L),
/// skin tones (a* 3…22 and b* 4…31 with L ≥ 15) and strongly saturated colours (chroma above 60) are summed, the sum is
/// reduced to 32 × 32, blurred as wide as a sixth of the crop's diagonal there, and the crop goes over its maximum.
/// Nil for a picture with nothing in it (a flat colour): then the centre (where libvips would crop at the top left).
enum AttentionCrop {
    /// The centre of the most interesting `cropWidth` × `cropHeight` area of `image` (in `image`'s pixels), as
    /// fractions of its width and height.
    static func centre(of image: PixelImage, cropWidth: Int, cropHeight: Int) -> (x: Double, y: Double)? {
        // Read at the scale `vipsthumbnail -s 256 --smartcrop attention` reads it, the short side 256 px (the long side
        // 1024 at most): the edges' weight against the colour masks depends on it (a gradient per pixel grows as the
        // picture shrinks).
        let scale = min(1, 256 / Double(min(image.width, image.height)), 1024 / Double(max(image.width, image.height)))
        let w = max(1, Int((Double(image.width) * scale).rounded())), h = max(1, Int((Double(image.height) * scale).rounded()))
        let small = w == image.width && h == image.height ? image : Resizer.thumbnail(image, width: w, height: h)
        var lightness = [Float](repeating: 0, count: w * h), interest = lightness
        for i in 0..<w * h {
            let (r, g, b) = small.rgb(x: i % w, y: i / w)
            let lab = Self.lab(r, g, b)
            lightness[i] = lab.l
            let skin = lab.a >= 3 && lab.a <= 22 && lab.b >= 4 && lab.b <= 31 && lab.l >= 15
            let saturated = (lab.a * lab.a + lab.b * lab.b).squareRoot() > 60
            interest[i] = (skin ? 255 : 0) + (saturated ? 255 : 0)
        }
        // Sobel on L, |gx| + |gy|, the edges' pixels extended.
        func at(_ x: Int, _ y: Int) -> Float { lightness[min(max(y, 0), h - 1) * w + min(max(x, 0), w - 1)] }
        for y in 0..<h {
            for x in 0..<w {
                let gx = at(x + 1, y - 1) + 2 * at(x + 1, y) + at(x + 1, y + 1) - at(x - 1, y - 1) - 2 * at(x - 1, y) - at(x - 1, y + 1)
                let gy = at(x - 1, y + 1) + 2 * at(x, y + 1) + at(x + 1, y + 1) - at(x - 1, y - 1) - 2 * at(x, y - 1) - at(x + 1, y - 1)
                interest[y * w + x] += abs(gx) + abs(gy)
            }
        }
        // Reduced to 32 × 32 by averaging each cell's pixels.
        let n = 32
        var map = [Double](repeating: 0, count: n * n), counts = map
        for y in 0..<h {
            for x in 0..<w {
                let cell = min(n - 1, y * n / h) * n + min(n - 1, x * n / w)
                map[cell] += Double(interest[y * w + x])
                counts[cell] += 1
            }
        }
        for i in map.indices where counts[i] > 0 { map[i] /= counts[i] }
        // Blurred as wide as a sixth of the crop's diagonal on the map.
        let sigma = ((Double(cropWidth) / Double(image.width) * 32).squared + (Double(cropHeight) / Double(image.height) * 32).squared).squareRoot() / 6
        let blurred = Self.gaussianBlur(map, side: n, sigma: max(sigma, 0.5))
        let best = blurred.indices.max { blurred[$0] < blurred[$1] }!
        // Nothing stands out: a flat picture, or only the resampling's last-bit ripples (an edge of one level is 1.6).
        guard blurred[best] >= 1 else { return nil }
        return ((Double(best % n) + 0.5) / Double(n), (Double(best / n) + 0.5) / Double(n))
    }

    /// A separable Gaussian blur of a `side` × `side` map, its edges extended.
    static func gaussianBlur(_ map: [Double], side n: Int, sigma: Double) -> [Double] {
        let radius = Int((3 * sigma).rounded(.up))
        let kernel = (-radius...radius).map { exp(-Double($0 * $0) / (2 * sigma * sigma)) }
        let total = kernel.reduce(0, +)
        func pass(_ input: [Double], horizontal: Bool) -> [Double] {
            var output = input
            for y in 0..<n {
                for x in 0..<n {
                    var sum = 0.0
                    for (k, weight) in kernel.enumerated() {
                        let offset = k - radius
                        let (sx, sy) = horizontal ? (min(max(x + offset, 0), n - 1), y) : (x, min(max(y + offset, 0), n - 1))
                        sum += input[sy * n + sx] * weight
                    }
                    output[y * n + x] = sum / total
                }
            }
            return output
        }
        return pass(pass(map, horizontal: true), horizontal: false)
    }

    /// sRGB-encoded bytes → CIELAB (D65), as libvips converts for its rule.
    static func lab(_ r: UInt8, _ g: UInt8, _ b: UInt8) -> (l: Float, a: Float, b: Float) {
        let (lr, lg, lb) = (XYB.linear[Int(r)], XYB.linear[Int(g)], XYB.linear[Int(b)])
        let x = (0.4124564 * lr + 0.3575761 * lg + 0.1804375 * lb) / 0.95047
        let y = 0.2126729 * lr + 0.7151522 * lg + 0.0721750 * lb
        let z = (0.0193339 * lr + 0.1191920 * lg + 0.9503041 * lb) / 1.08883
        func f(_ t: Float) -> Float { t > 216 / 24389 ? cbrtf(t) : (24389 / 27 * t + 16) / 116 }
        let (fx, fy, fz) = (f(x), f(y), f(z))
        return (116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz))
    }
}

extension Double {
    fileprivate var squared: Double { self * self }
}
