/// Separable Lanczos3 resampling of 8-bit grey or RGB images: a horizontal pass into an 8-bit
/// intermediate image, then a vertical pass.
///
/// The passes use unchecked pointer arithmetic (bounds checks cost about 1.7× here);
/// `ReferenceResizer` in the tests computes the same weights with plain checked loops, and the two
/// are compared pixel for pixel.
public enum Resizer {
    /// Returns `image` resampled to `width` × `height`.
    public static func resize(_ image: PixelImage, width: Int, height: Int) -> PixelImage {
        precondition(width > 0 && height > 0)
        var result = image
        if width != image.width {
            result = horizontal(result, filter: Lanczos3Filter(inputSize: image.width, outputSize: width))
        }
        if height != image.height {
            result = vertical(result, filter: Lanczos3Filter(inputSize: image.height, outputSize: height))
        }
        return result
    }

    @inline(__always)
    static func clamp(_ accumulator: Int32) -> UInt8 {
        let v = accumulator >> Lanczos3Filter.precisionBits
        return UInt8(truncatingIfNeeded: v < 0 ? 0 : (v > 255 ? 255 : v))
    }

    static func horizontal(_ image: PixelImage, filter: Lanczos3Filter) -> PixelImage {
        let c = image.channels, inW = image.width, outW = filter.outputSize, h = image.height
        let half = Lanczos3Filter.one >> 1
        let pixels = [UInt8](unsafeUninitializedCapacity: outW * h * c) { out, count in
            image.pixels.withUnsafeBufferPointer { srcBuffer in
                filter.weights.withUnsafeBufferPointer { weightBuffer in
                    let src = srcBuffer.baseAddress!, dst = out.baseAddress!, weights = weightBuffer.baseAddress!
                    for y in 0..<h {
                        let row = src + y * inW * c
                        var o = dst + y * outW * c
                        for x in 0..<outW {
                            let w = weights + x * filter.taps
                            let n = filter.counts[x]
                            if c == 3 {
                                var p = row + filter.starts[x] * 3
                                var r = half, g = half, b = half
                                for k in 0..<n {
                                    let wk = w[k]
                                    r &+= Int32(p[0]) &* wk
                                    g &+= Int32(p[1]) &* wk
                                    b &+= Int32(p[2]) &* wk
                                    p += 3
                                }
                                o[0] = clamp(r); o[1] = clamp(g); o[2] = clamp(b)
                                o += 3
                            } else {
                                let p = row + filter.starts[x]
                                var v = half
                                for k in 0..<n { v &+= Int32(p[k]) &* w[k] }
                                o[0] = clamp(v)
                                o += 1
                            }
                        }
                    }
                }
            }
            count = outW * h * c
        }
        return PixelImage(width: outW, height: h, channels: c, pixels: pixels)
    }

    static func vertical(_ image: PixelImage, filter: Lanczos3Filter) -> PixelImage {
        let stride = image.width * image.channels, outH = filter.outputSize
        let half = Lanczos3Filter.one >> 1
        var accumulator = [Int32](repeating: 0, count: stride)
        let pixels = [UInt8](unsafeUninitializedCapacity: stride * outH) { out, count in
            image.pixels.withUnsafeBufferPointer { srcBuffer in
                accumulator.withUnsafeMutableBufferPointer { accBuffer in
                    let src = srcBuffer.baseAddress!, dst = out.baseAddress!, acc = accBuffer.baseAddress!
                    for y in 0..<outH {
                        for x in 0..<stride { acc[x] = half }
                        let first = filter.starts[y]
                        for k in 0..<filter.counts[y] {
                            let wk = filter.weights[y * filter.taps + k]
                            let row = src + (first + k) * stride
                            for x in 0..<stride { acc[x] &+= Int32(row[x]) &* wk }
                        }
                        let o = dst + y * stride
                        for x in 0..<stride { o[x] = clamp(acc[x]) }
                    }
                }
            }
            count = stride * outH
        }
        return PixelImage(width: image.width, height: outH, channels: image.channels, pixels: pixels)
    }
}
