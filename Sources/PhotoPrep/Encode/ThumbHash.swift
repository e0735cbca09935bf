#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A photo's placeholder: a ThumbHash (Evan Wallace's format, evanw.github.io/thumbhash), some 20–25 bytes an app
/// draws at once — a blurred copy with the photo's colours and aspect ratio — while the photo itself loads. Written
/// here from the format's description (the reference implementations are not a package we can depend on); any
/// ThumbHash decoder (the JavaScript, Swift, Kotlin, Rust and Python ones) reads what `encode` writes.
///
/// The format: the photo, at most 100 × 100, in three channels — luminance L = (r + g + b) / 3, yellow–blue
/// P = (r + g) / 2 − b, red–green Q = r − g, from sRGB-encoded values in 0…1 — each reduced to its lowest DCT
/// terms (up to 7 along the long side for L, 3 × 3 for P and Q, a triangle of them: cx·ny < nx·(ny − cy)). Their DC
/// terms and the largest AC term of each channel go into a 5-byte header; each AC term, divided by that largest one,
/// into a 4-bit nibble. Photos stored here are opaque JPEGs, so `encode` writes the format's opaque form (no alpha
/// channel); `decode` reads both.
public enum ThumbHash {
    /// The largest side `encode` takes; `placeholder(of:)` reduces a photo to it first.
    public static let maxSide = 100

    /// The ThumbHash of `image`, reduced to fit 100 × 100 first (`Resizer.thumbnail`, as the thumbnails are).
    public static func placeholder(of image: PixelImage) -> [UInt8] {
        let scale = min(1, Double(maxSide) / Double(max(image.width, image.height)))
        let width = max(1, Int((Double(image.width) * scale).rounded())), height = max(1, Int((Double(image.height) * scale).rounded()))
        let small = width == image.width && height == image.height ? image : Resizer.thumbnail(image, width: width, height: height)
        return encode(small)
    }

    /// The ThumbHash of `image`, which fits 100 × 100.
    public static func encode(_ image: PixelImage) -> [UInt8] {
        precondition(image.width <= maxSide && image.height <= maxSide, "a ThumbHash is made from at most 100 × 100 pixels")
        let (w, h) = (image.width, image.height)
        var l = [Double](repeating: 0, count: w * h), p = l, q = l
        for i in 0..<w * h {
            let (r, g, b) = image.rgb(x: i % w, y: i / w)
            let (red, green, blue) = (Double(r) / 255, Double(g) / 255, Double(b) / 255)
            l[i] = (red + green + blue) / 3
            p[i] = (red + green) / 2 - blue
            q[i] = red - green
        }
        let lx = max(1, Int((7 * Double(w) / Double(max(w, h))).rounded())), ly = max(1, Int((7 * Double(h) / Double(max(w, h))).rounded()))
        let lum = Channel(encoding: l, width: w, height: h, nx: max(3, lx), ny: max(3, ly))
        let yellowBlue = Channel(encoding: p, width: w, height: h, nx: 3, ny: 3)
        let redGreen = Channel(encoding: q, width: w, height: h, nx: 3, ny: 3)

        let landscape = w > h
        func rounded(_ value: Double) -> Int { Int(value.rounded()) }
        let header24 = rounded(63 * lum.dc) | rounded(31.5 + 31.5 * yellowBlue.dc) << 6 | rounded(31.5 + 31.5 * redGreen.dc) << 12 | rounded(31 * lum.scale) << 18
        let header16 = (landscape ? ly : lx) | rounded(63 * yellowBlue.scale) << 3 | rounded(63 * redGreen.scale) << 9 | (landscape ? 1 << 15 : 0)
        let terms = lum.ac + yellowBlue.ac + redGreen.ac
        var hash = [UInt8](repeating: 0, count: 5 + (terms.count + 1) / 2)
        hash[0] = UInt8(header24 & 0xFF)
        hash[1] = UInt8(header24 >> 8 & 0xFF)
        hash[2] = UInt8(header24 >> 16 & 0xFF)
        hash[3] = UInt8(header16 & 0xFF)
        hash[4] = UInt8(header16 >> 8 & 0xFF)
        for (index, term) in terms.enumerated() {
            hash[5 + index / 2] |= UInt8(rounded(15 * term)) << (index % 2 * 4)
        }
        return hash
    }

    /// `hash` in base64 (RFC 4648 §4, padded), as ThumbHashes travel in JSON and as the API and `--json` give them.
    public static func base64(_ hash: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
        var text = ""
        for start in stride(from: 0, to: hash.count, by: 3) {
            let chunk = hash[start..<min(start + 3, hash.count)]
            let bits = chunk.enumerated().reduce(0) { $0 | Int($1.element) << (16 - 8 * $1.offset) }
            for i in 0..<4 { text.append(i <= chunk.count ? alphabet[bits >> (18 - 6 * i) & 63] : "=") }
        }
        return text
    }

    /// A placeholder drawn from its ThumbHash: RGBA (not premultiplied), at most 32 pixels on its long side.
    public struct Rendering: Sendable, Equatable {
        public var width: Int
        public var height: Int
        public var rgba: [UInt8]

        /// The mean of each channel over the picture, 0…255.
        public var meanRGB: (red: Double, green: Double, blue: Double) {
            var sums = (0.0, 0.0, 0.0)
            for i in stride(from: 0, to: rgba.count, by: 4) {
                sums.0 += Double(rgba[i])
                sums.1 += Double(rgba[i + 1])
                sums.2 += Double(rgba[i + 2])
            }
            let n = Double(width * height)
            return (sums.0 / n, sums.1 / n, sums.2 / n)
        }
    }

    /// What a ThumbHash's header says.
    struct Header {
        var lDC, pDC, qDC, lScale, pScale, qScale: Double
        var hasAlpha: Bool
        var landscape: Bool
        /// The luminance terms along x and y as written (the aspect ratio), before the decoder's floor of 3.
        var lx, ly: Int
        var aDC = 1.0, aScale = 0.0

        init?(_ hash: [UInt8]) {
            guard hash.count >= 5 else { return nil }
            let header24 = Int(hash[0]) | Int(hash[1]) << 8 | Int(hash[2]) << 16
            let header16 = Int(hash[3]) | Int(hash[4]) << 8
            lDC = Double(header24 & 63) / 63
            pDC = Double(header24 >> 6 & 63) / 31.5 - 1
            qDC = Double(header24 >> 12 & 63) / 31.5 - 1
            lScale = Double(header24 >> 18 & 31) / 31
            hasAlpha = header24 >> 23 != 0
            pScale = Double(header16 >> 3 & 63) / 63
            qScale = Double(header16 >> 9 & 63) / 63
            landscape = header16 >> 15 != 0
            let long = hasAlpha ? 5 : 7, short = header16 & 7
            (lx, ly) = landscape ? (long, short) : (short, long)
            guard lx > 0, ly > 0 else { return nil }
            if hasAlpha {
                guard hash.count >= 6 else { return nil }
                aDC = Double(hash[5] & 15) / 15
                aScale = Double(hash[5] >> 4) / 15
            }
        }
    }

    /// The width / height of the photo a ThumbHash was made from, as the hash records it (to a seventh or so).
    public static func aspectRatio(of hash: [UInt8]) -> Double? {
        Header(hash).map { Double($0.lx) / Double($0.ly) }
    }

    /// The average colour a ThumbHash records (its DC terms), each channel 0…1.
    public static func averageColor(of hash: [UInt8]) -> (red: Double, green: Double, blue: Double, alpha: Double)? {
        guard let header = Header(hash) else { return nil }
        let (r, g, b) = rgb(l: header.lDC, p: header.pDC, q: header.qDC)
        return (r, g, b, header.aDC)
    }

    /// Draws a ThumbHash; nil when it is too short to be one.
    public static func decode(_ hash: [UInt8]) -> Rendering? {
        guard let header = Header(hash) else { return nil }
        let lx = max(3, header.lx), ly = max(3, header.ly)
        var nibbles = (header.hasAlpha ? 6 : 5) * 2
        func terms(nx: Int, ny: Int, scale: Double) -> [Double]? {
            var values: [Double] = []
            for cy in 0..<ny {
                var cx = cy > 0 ? 0 : 1
                while cx * ny < nx * (ny - cy) {
                    guard nibbles / 2 < hash.count else { return nil }
                    let nibble = hash[nibbles / 2] >> (nibbles % 2 * 4) & 15
                    values.append((Double(nibble) / 7.5 - 1) * scale)
                    nibbles += 1
                    cx += 1
                }
            }
            return values
        }
        // The colour terms a little stronger, as the format's decoders draw them: quantising weakened them.
        guard let lAC = terms(nx: lx, ny: ly, scale: header.lScale), let pAC = terms(nx: 3, ny: 3, scale: header.pScale * 1.25),
            let qAC = terms(nx: 3, ny: 3, scale: header.qScale * 1.25)
        else { return nil }
        let aAC = header.hasAlpha ? terms(nx: 5, ny: 5, scale: header.aScale) : []
        guard let aAC else { return nil }

        let ratio = Double(header.lx) / Double(header.ly)
        let w = Int(ratio > 1 ? 32 : (32 * ratio).rounded()), h = Int(ratio > 1 ? (32 / ratio).rounded() : 32)
        var rgba = [UInt8](repeating: 0, count: w * h * 4)
        let cxStop = max(lx, header.hasAlpha ? 5 : 3), cyStop = max(ly, header.hasAlpha ? 5 : 3)
        var fx = [Double](repeating: 0, count: cxStop), fy = [Double](repeating: 0, count: cyStop)
        func sum(_ ac: [Double], nx: Int, ny: Int) -> Double {
            var total = 0.0, j = 0
            for cy in 0..<ny {
                var cx = cy > 0 ? 0 : 1
                while cx * ny < nx * (ny - cy) {
                    total += ac[j] * fx[cx] * fy[cy] * 2
                    j += 1
                    cx += 1
                }
            }
            return total
        }
        for y in 0..<h {
            for cy in 0..<cyStop { fy[cy] = cos(Double.pi / Double(h) * (Double(y) + 0.5) * Double(cy)) }
            for x in 0..<w {
                for cx in 0..<cxStop { fx[cx] = cos(Double.pi / Double(w) * (Double(x) + 0.5) * Double(cx)) }
                let l = header.lDC + sum(lAC, nx: lx, ny: ly)
                let p = header.pDC + sum(pAC, nx: 3, ny: 3), q = header.qDC + sum(qAC, nx: 3, ny: 3)
                let a = header.aDC + (header.hasAlpha ? sum(aAC, nx: 5, ny: 5) : 0)
                let (r, g, b) = rgb(l: l, p: p, q: q)
                let i = (y * w + x) * 4
                for (offset, value) in [r, g, b, a].enumerated() { rgba[i + offset] = UInt8((255 * min(1, max(0, value))).rounded()) }
            }
        }
        return Rendering(width: w, height: h, rgba: rgba)
    }

    /// L, P, Q back to sRGB-encoded red, green and blue (clamped to 0…1).
    private static func rgb(l: Double, p: Double, q: Double) -> (Double, Double, Double) {
        let b = l - 2.0 / 3.0 * p
        let r = (3 * l - b + q) / 2
        let g = r - q
        return (min(1, max(0, r)), min(1, max(0, g)), min(1, max(0, b)))
    }

    /// One channel's lowest DCT terms: the DC term, and the AC terms scaled to 0…1 by the largest of them.
    private struct Channel {
        var dc = 0.0
        var ac: [Double] = []
        var scale = 0.0

        init(encoding values: [Double], width w: Int, height h: Int, nx: Int, ny: Int) {
            var fx = [Double](repeating: 0, count: w)
            for cy in 0..<ny {
                var cx = 0
                while cx * ny < nx * (ny - cy) {
                    for x in 0..<w { fx[x] = cos(Double.pi / Double(w) * Double(cx) * (Double(x) + 0.5)) }
                    var f = 0.0
                    for y in 0..<h {
                        let fy = cos(Double.pi / Double(h) * Double(cy) * (Double(y) + 0.5))
                        for x in 0..<w { f += values[x + y * w] * fx[x] * fy }
                    }
                    f /= Double(w * h)
                    if cx > 0 || cy > 0 {
                        ac.append(f)
                        scale = max(scale, abs(f))
                    } else {
                        dc = f
                    }
                    cx += 1
                }
            }
            if scale > 0 { ac = ac.map { 0.5 + 0.5 / scale * $0 } }
        }
    }
}
