/// Separable Lanczos3 resampling of 8-bit grey or RGB images: a vertical pass into an 8-bit
/// intermediate image, then a horizontal pass.
///
/// The passes use unchecked pointer arithmetic (bounds checks cost about 1.7× here);
/// `ReferenceResizer` in the tests computes the same weights with plain checked loops, and the two
/// are compared pixel for pixel.
public enum Resizer {
    /// Returns `image` resampled to `width` × `height`.
    public static func resize(_ image: PixelImage, width: Int, height: Int) -> PixelImage {
        precondition(width > 0 && height > 0)
        // Vertical first: its inner loop runs along whole rows and vectorises; the horizontal pass
        // then works on the already shortened image.
        var result = image
        if height != image.height {
            result = vertical(result, filter: Lanczos3Filter(inputSize: image.height, outputSize: height))
        }
        if width != image.width {
            result = horizontal(result, filter: Lanczos3Filter(inputSize: image.width, outputSize: width))
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
        // Each source row is widened once into 4-lane pixels (RGB + padding), so that every tap of
        // an RGB output pixel is one SIMD multiply-add.
        var widened = [SIMD4<Int32>](repeating: .zero, count: inW)
        let pixels = [UInt8](unsafeUninitializedCapacity: outW * h * c) { out, count in
            image.pixels.withUnsafeBufferPointer { src in
                widened.withUnsafeMutableBufferPointer { wide in
                    for y in 0..<h {
                        let row = UnsafeBufferPointer(rebasing: src[(y * inW * c)..<((y + 1) * inW * c)])
                        let target = UnsafeMutableBufferPointer(rebasing: out[(y * outW * c)..<((y + 1) * outW * c)])
                        if c == 3 {
                            horizontalRGBRow(row, into: target, filter: filter, wide: wide.baseAddress!)
                        } else {
                            horizontalGreyRow(row, into: target, filter: filter)
                        }
                    }
                }
            }
            count = outW * h * c
        }
        return PixelImage(width: outW, height: h, channels: c, pixels: pixels)
    }

    static func horizontalRGBRow(
        _ row: UnsafeBufferPointer<UInt8>, into out: UnsafeMutableBufferPointer<UInt8>, filter: Lanczos3Filter,
        wide: UnsafeMutablePointer<SIMD4<Int32>>
    ) {
        let src = row.baseAddress!, dst = out.baseAddress!
        var i = 0, s = src
        while i < row.count / 3 {
            wide[i] = SIMD4(Int32(s[0]), Int32(s[1]), Int32(s[2]), 0)
            i += 1
            s += 3
        }
        let half = SIMD4<Int32>(repeating: Lanczos3Filter.one >> 1)
        let top = SIMD4<Int32>(repeating: 255)
        filter.weights.withUnsafeBufferPointer { weightBuffer in
            filter.starts.withUnsafeBufferPointer { starts in
                filter.counts.withUnsafeBufferPointer { counts in
                    var w = weightBuffer.baseAddress!, o = dst
                    for x in 0..<out.count / 3 {
                        let p = wide + starts[x]
                        let n = counts[x]
                        var acc = half
                        var k = 0
                        while k < n {
                            acc &+= p[k] &* SIMD4(repeating: w[k])
                            k += 1
                        }
                        let v = pointwiseMin(pointwiseMax(acc &>> Lanczos3Filter.precisionBits, .zero), top)
                        o[0] = UInt8(truncatingIfNeeded: v[0])
                        o[1] = UInt8(truncatingIfNeeded: v[1])
                        o[2] = UInt8(truncatingIfNeeded: v[2])
                        o += 3
                        w += filter.taps
                    }
                }
            }
        }
    }

    static func horizontalGreyRow(
        _ row: UnsafeBufferPointer<UInt8>, into out: UnsafeMutableBufferPointer<UInt8>, filter: Lanczos3Filter
    ) {
        for x in 0..<out.count {
            var v = Lanczos3Filter.one >> 1
            for k in 0..<filter.counts[x] {
                v &+= Int32(row[filter.starts[x] + k]) &* filter.weights[x * filter.taps + k]
            }
            out[x] = clamp(v)
        }
    }

    static func vertical(_ image: PixelImage, filter: Lanczos3Filter) -> PixelImage {
        let stride = image.width * image.channels, outH = filter.outputSize
        let pixels = [UInt8](unsafeUninitializedCapacity: stride * outH) { out, count in
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
