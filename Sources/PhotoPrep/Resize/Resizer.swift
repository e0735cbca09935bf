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
        // Horizontal first, then vertical, each rounded to 8 bits: Pillow's order and arithmetic.
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

    /// The horizontal pass works on strips of 8 rows: each source column of a strip is transposed
    /// into 8-lane vectors (one per channel), so every tap of 8 output pixels is one SIMD
    /// multiply-add per channel.
    static func horizontal(_ image: PixelImage, filter: Lanczos3Filter) -> PixelImage {
        let c = image.channels, inW = image.width, outW = filter.outputSize, h = image.height
        var strip = [SIMD8<Int32>](repeating: .zero, count: inW * c)
        let pixels = [UInt8](unsafeUninitializedCapacity: outW * h * c) { out, count in
            HugePages.advise(out)
            image.pixels.withUnsafeBufferPointer { srcBuffer in
                strip.withUnsafeMutableBufferPointer { stripBuffer in
                    filter.weights.withUnsafeBufferPointer { weights in
                        filter.starts.withUnsafeBufferPointer { starts in
                            filter.counts.withUnsafeBufferPointer { counts in
                                let src = srcBuffer.baseAddress!, dst = out.baseAddress!
                                let columns = stripBuffer.baseAddress!
                                let lanes = UnsafeMutableRawPointer(columns).assumingMemoryBound(to: Int32.self)
                                var y0 = 0
                                while y0 < h {
                                    let rows = min(8, h - y0)
                                    for r in 0..<rows {
                                        let row = src + (y0 + r) * inW * c
                                        for i in 0..<(inW * c) { lanes[i &* 8 &+ r] = Int32(row[i]) }
                                    }
                                    let target = dst + y0 * outW * c
                                    if c == 3 {
                                        horizontalStripRGB(columns, rows: rows, outW: outW, weights: weights.baseAddress!, taps: filter.taps, starts: starts.baseAddress!, counts: counts.baseAddress!, into: target)
                                    } else {
                                        horizontalStripGrey(columns, rows: rows, outW: outW, weights: weights.baseAddress!, taps: filter.taps, starts: starts.baseAddress!, counts: counts.baseAddress!, into: target)
                                    }
                                    y0 += 8
                                }
                            }
                        }
                    }
                }
            }
            count = outW * h * c
        }
        return PixelImage(width: outW, height: h, channels: c, pixels: pixels)
    }

    @inline(__always)
    static func narrow(_ acc: SIMD8<Int32>) -> SIMD8<Int32> {
        pointwiseMin(pointwiseMax(acc &>> Lanczos3Filter.precisionBits, .zero), SIMD8(repeating: 255))
    }

    static func horizontalStripRGB(
        _ columns: UnsafePointer<SIMD8<Int32>>, rows: Int, outW: Int, weights: UnsafePointer<Int32>, taps: Int,
        starts: UnsafePointer<Int>, counts: UnsafePointer<Int>, into out: UnsafeMutablePointer<UInt8>
    ) {
        let half = SIMD8<Int32>(repeating: Lanczos3Filter.one >> 1)
        let rowStride = outW * 3
        for x in 0..<outW {
            let w = weights + x * taps
            var p = columns + starts[x] * 3
            var r = half, g = half, b = half
            for k in 0..<counts[x] {
                let wk = SIMD8<Int32>(repeating: w[k])
                r &+= p[0] &* wk
                g &+= p[1] &* wk
                b &+= p[2] &* wk
                p += 3
            }
            let r8 = SIMD8<UInt8>(truncatingIfNeeded: narrow(r))
            let g8 = SIMD8<UInt8>(truncatingIfNeeded: narrow(g))
            let b8 = SIMD8<UInt8>(truncatingIfNeeded: narrow(b))
            var o = out + x * 3
            for lane in 0..<rows {
                o[0] = r8[lane]
                o[1] = g8[lane]
                o[2] = b8[lane]
                o += rowStride
            }
        }
    }

    static func horizontalStripGrey(
        _ columns: UnsafePointer<SIMD8<Int32>>, rows: Int, outW: Int, weights: UnsafePointer<Int32>, taps: Int,
        starts: UnsafePointer<Int>, counts: UnsafePointer<Int>, into out: UnsafeMutablePointer<UInt8>
    ) {
        let half = SIMD8<Int32>(repeating: Lanczos3Filter.one >> 1)
        for x in 0..<outW {
            let w = weights + x * taps
            let p = columns + starts[x]
            var v = half
            for k in 0..<counts[x] { v &+= p[k] &* SIMD8<Int32>(repeating: w[k]) }
            let v8 = SIMD8<UInt8>(truncatingIfNeeded: narrow(v))
            for lane in 0..<rows { out[lane * outW + x] = v8[lane] }
        }
    }

    static func vertical(_ image: PixelImage, filter: Lanczos3Filter) -> PixelImage {
        let stride = image.width * image.channels, outH = filter.outputSize
        let pixels = [UInt8](unsafeUninitializedCapacity: stride * outH) { out, count in
            HugePages.advise(out)
            image.pixels.withUnsafeBufferPointer { srcBuffer in
                let src = srcBuffer.baseAddress!, dst = out.baseAddress!
                var rows = [UnsafePointer<UInt8>](repeating: src, count: filter.taps)
                for y in 0..<outH {
                    let n = filter.counts[y]
                    for k in 0..<n { rows[k] = src + (filter.starts[y] + k) * stride }
                    let weights = filter.weights[(y * filter.taps)..<(y * filter.taps + n)]
                    verticalRow(rows: rows, weights: weights, count: n, stride: stride, into: dst + y * stride)
                }
            }
            count = stride * outH
        }
        return PixelImage(width: image.width, height: outH, channels: image.channels, pixels: pixels)
    }

    /// One output row of the vertical pass: 16 samples at a time in SIMD registers, the tail scalar.
    @inline(__always)
    static func verticalRow(
        rows: [UnsafePointer<UInt8>], weights: ArraySlice<Int32>, count n: Int, stride: Int,
        into out: UnsafeMutablePointer<UInt8>
    ) {
        let half = Lanczos3Filter.one >> 1
        let base = weights.startIndex
        var x = 0
        while x + 16 <= stride {
            var acc = SIMD16<Int32>(repeating: half)
            for k in 0..<n {
                let v = UnsafeRawPointer(rows[k] + x).loadUnaligned(as: SIMD16<UInt8>.self)
                acc &+= SIMD16<Int32>(truncatingIfNeeded: v) &* weights[base + k]
            }
            let shifted = (acc &>> Lanczos3Filter.precisionBits).clamped(
                lowerBound: SIMD16(repeating: 0), upperBound: SIMD16(repeating: 255))
            UnsafeMutableRawPointer(out + x).storeBytes(of: SIMD16<UInt8>(truncatingIfNeeded: shifted), as: SIMD16<UInt8>.self)
            x += 16
        }
        while x < stride {
            var acc = half
            for k in 0..<n { acc &+= Int32(rows[k][x]) &* weights[base + k] }
            out[x] = clamp(acc)
            x += 1
        }
    }
}
