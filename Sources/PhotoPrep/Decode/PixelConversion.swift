/// Brings a decoder's interleaved RGB or RGBA rows, 8-bit or up to 16-bit, to the pipeline's 8-bit RGB:
/// high bit depths rounded to the nearest 8-bit value, transparency composed onto a background as
/// `LibPNGRowReader` does for PNG (in the sRGB-encoded space, `c × a + background × (1 − a)`, one rounding).
struct PixelConversion {
    /// Samples per pixel: 3 (RGB) or 4 (RGB + alpha, alpha last).
    var channels: Int
    /// The largest sample value: 255 for 8-bit samples (one byte each), else (1 << bits) − 1 (two bytes
    /// each, little-endian, as libheif's `RRGGBB_LE` gives them).
    var maximum: Int
    /// The colour values are premultiplied by alpha.
    var premultiplied = false
    var background: RGBColor = .white

    /// Converts `height` rows of `width` pixels, `stride` bytes apart, into a packed 8-bit RGB image.
    func image(from base: UnsafeRawPointer, width: Int, height: Int, stride: Int) -> PixelImage {
        let rowBytes = width * 3
        let pixels = [UInt8](unsafeUninitializedCapacity: rowBytes * height) { out, count in
            for y in 0..<height {
                convert(row: base + y * stride, width: width, into: out.baseAddress! + y * rowBytes)
            }
            count = rowBytes * height
        }
        return PixelImage(width: width, height: height, channels: 3, pixels: pixels)
    }

    /// One row.
    func convert(row: UnsafeRawPointer, width: Int, into out: UnsafeMutablePointer<UInt8>) {
        let wide = maximum > 255
        if !wide && channels == 3 {
            out.update(from: row.assumingMemoryBound(to: UInt8.self), count: width * 3)
            return
        }
        let maximum = Int64(self.maximum)
        func sample(_ index: Int) -> Int64 {
            wide ? Int64(UInt16(littleEndian: row.loadUnaligned(fromByteOffset: index * 2, as: UInt16.self))) : Int64(row.load(fromByteOffset: index, as: UInt8.self))
        }
        if channels == 3 {
            // Nearest 8-bit value: v × 255 / max, rounded (a 10-bit 1023 is 255, 512 is 128).
            for i in 0..<(width * 3) {
                out[i] = UInt8((min(sample(i), maximum) * 255 + maximum / 2) / maximum)
            }
            return
        }
        // Composed in 16-bit precision: every sample scaled to 0…65535 first, then PNG's one rounding.
        let background = [background.red, background.green, background.blue].map { Int64($0) * 257 }
        func to16(_ v: Int64) -> Int64 { maximum == 65535 ? v : (min(v, maximum) * 65535 + maximum / 2) / maximum }
        for x in 0..<width {
            let a = to16(sample(x * 4 + 3))
            for c in 0..<3 {
                let colour = to16(sample(x * 4 + c))
                let mixed = (premultiplied ? colour * 65535 : colour * a) + background[c] * (65535 - a)
                out[x * 3 + c] = UInt8(min(255, (mixed * 255 + 2_147_418_112) / 4_294_836_225))
            }
        }
    }
}
