/// Separable Lanczos3 resampling of 8-bit grey or RGB images: a horizontal pass, rounded to 8 bits,
/// then a vertical pass (Pillow's order and arithmetic). When both dimensions change the passes are
/// fused: each strip of horizontally resampled rows goes into a ring just deep enough for the vertical
/// filter, and every output row is made as soon as its last source row is there — no intermediate
/// image (a 3840 × 2400 photo for 2048 px: 14.7 MB less at once, and as many fewer fresh pages to fault in).
///
/// The passes use unchecked pointer arithmetic (bounds checks cost about 1.7× here);
/// `ReferenceResizer` in the tests computes the same weights with plain checked loops, and the two
/// are compared pixel for pixel.
public enum Resizer {
    /// Returns `image` resampled to `width` × `height`.
    public static func resize(_ image: PixelImage, width: Int, height: Int) -> PixelImage {
        precondition(width > 0 && height > 0)
        switch (width != image.width, height != image.height) {
        case (true, true):
            return fused(image, horizontal: Lanczos3Filter(inputSize: image.width, outputSize: width),
                         vertical: Lanczos3Filter(inputSize: image.height, outputSize: height))
        case (true, false): return horizontal(image, filter: Lanczos3Filter(inputSize: image.width, outputSize: width))
        case (false, true): return vertical(image, filter: Lanczos3Filter(inputSize: image.height, outputSize: height))
        case (false, false): return image
        }
    }

    /// Returns `image` reduced to `width` × `height` for a thumbnail. When the image is at least four times as
    /// large both ways, each 2 × 2 block is first averaged into one pixel as the filter reads the rows (a box, as
    /// Pillow's `thumbnail` reduces before it resamples): Lanczos3 then reads a quarter of the samples with half
    /// the taps each way — a 2048 × 1365 photo to 512 × 341 with about a quarter of the multiply-adds — for a
    /// result within half a level on average of Lanczos3 alone (`ResizerTests`).
    static func thumbnail(_ image: PixelImage, width: Int, height: Int) -> PixelImage {
        guard image.height >= 4 * height, image.width >= 4 * width, image.channels == 3 else { return resize(image, width: width, height: height) }
        let n = image.width * 3, half = (image.width + 1) / 2
        var boxes = [UInt8](repeating: 0, count: 8 * half * 3)
        return image.pixels.withUnsafeBufferPointer { source in
            boxes.withUnsafeMutableBufferPointer { buffer in
                let (from, to) = (source.baseAddress!, buffer.baseAddress!)
                let halved = Rows(width: half, height: (image.height + 1) / 2, channels: 3) { y0, count in
                    for r in 0..<count {
                        let top = 2 * (y0 + r)
                        averageBoxes(from + top * n, from + min(top + 1, image.height - 1) * n, width: image.width, into: to + r * half * 3)
                    }
                    return UnsafePointer(to)
                }
                return resize(halved, width: width, height: height)
            }
        }
    }

    /// Each 2 × 2 block of RGB pixels from rows `a` and `b`, averaged (rounding half up); an odd last column alone.
    @inline(__always)
    static func averageBoxes(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, width: Int, into out: UnsafeMutablePointer<UInt8>) {
        let pairs = width / 2
        for x in 0..<pairs {
            let i = 6 * x, o = 3 * x
            out[o] = UInt8(truncatingIfNeeded: (UInt16(a[i]) &+ UInt16(a[i + 3]) &+ UInt16(b[i]) &+ UInt16(b[i + 3]) &+ 2) &>> 2)
            out[o + 1] = UInt8(truncatingIfNeeded: (UInt16(a[i + 1]) &+ UInt16(a[i + 4]) &+ UInt16(b[i + 1]) &+ UInt16(b[i + 4]) &+ 2) &>> 2)
            out[o + 2] = UInt8(truncatingIfNeeded: (UInt16(a[i + 2]) &+ UInt16(a[i + 5]) &+ UInt16(b[i + 2]) &+ UInt16(b[i + 5]) &+ 2) &>> 2)
        }
        if width % 2 == 1 {
            let i = 6 * pairs, o = 3 * pairs
            for c in 0..<3 { out[o + c] = UInt8(truncatingIfNeeded: (UInt16(a[i + c]) &+ UInt16(b[i + c]) &+ 1) &>> 1) }
        }
    }

    @inline(__always)
    static func clamp(_ accumulator: Int32) -> UInt8 {
        let v = accumulator >> Lanczos3Filter.precisionBits
        return UInt8(truncatingIfNeeded: v < 0 ? 0 : (v > 255 ? 255 : v))
    }

    /// The horizontal pass works on strips of 8 rows, transposed into bytes: sample `i` of the strip's
    /// rows (pixel `i / c`, channel `i % c`) becomes 8 consecutive bytes, one per row, so every tap of 8
    /// output pixels is one widening load and one SIMD multiply-add per channel. Keeping the strip in
    /// bytes (not 32-bit lanes) keeps it in cache: 3840 × 3 × 8 bytes instead of four times that.
    static func horizontal(_ image: PixelImage, filter: Lanczos3Filter) -> PixelImage {
        let stride = filter.outputSize * image.channels
        let pixels = [UInt8](unsafeUninitializedCapacity: stride * image.height) { out, count in
            HugePages.advise(out)
            image.pixels.withUnsafeBufferPointer { source in
                horizontalStrips(of: image.rows(source), filter: filter, into: { y0 in out.baseAddress! + y0 * stride }, then: { _, _ in })
            }
            count = stride * image.height
        }
        return PixelImage(width: filter.outputSize, height: image.height, channels: image.channels, pixels: pixels)
    }

    /// Source rows as the horizontal pass takes them, 8 at a time: `rows(y0, count)` points at rows `y0 ..< y0 +
    /// count`, one after the other, or is nil when there are none (a decoder failed: the pass stops there).
    struct Rows {
        var width: Int
        var height: Int
        var channels: Int
        var rows: (_ y0: Int, _ count: Int) -> UnsafePointer<UInt8>?
    }

    /// Runs the horizontal pass strip by strip: the output rows of the strip starting at source row
    /// `y0` go to `target(y0)` (consecutive, `outputSize × channels` bytes apart), then `done(y0, rows)`.
    static func horizontalStrips(
        of source: Rows, filter: Lanczos3Filter,
        into target: (Int) -> UnsafeMutablePointer<UInt8>, then done: (_ y0: Int, _ rows: Int) -> Void
    ) {
        let c = source.channels, n = source.width * c, h = source.height, outW = filter.outputSize
        var strip = [UInt8](repeating: 0, count: n * 8)
        strip.withUnsafeMutableBufferPointer { stripBuffer in
            filter.weights.withUnsafeBufferPointer { weights in
                filter.starts.withUnsafeBufferPointer { starts in
                    filter.counts.withUnsafeBufferPointer { counts in
                        let lanes = stripBuffer.baseAddress!
                        let (w, s, k) = (weights.baseAddress!, starts.baseAddress!, counts.baseAddress!)
                        var y0 = 0
                        while y0 < h {
                            let rows = min(8, h - y0)
                            guard let src = source.rows(y0, rows) else { return }
                            transpose(src, rows: rows, samples: n, into: lanes)
                            if c == 3 {
                                horizontalStripRGB(lanes, rows: rows, outW: outW, weights: w, taps: filter.taps, starts: s, counts: k, into: target(y0))
                            } else {
                                horizontalStripGrey(lanes, rows: rows, outW: outW, weights: w, taps: filter.taps, starts: s, counts: k, into: target(y0))
                            }
                            done(y0, rows)
                            y0 += 8
                        }
                    }
                }
            }
        }
    }

    /// Both passes at once: horizontal strips into a ring of `taps + 8` rows, each output row made by
    /// the vertical filter as soon as the ring holds its source rows. Rows leave the ring only after
    /// every output row that reads them is made (the filter's windows move forward with the output).
    static func fused(_ image: PixelImage, horizontal: Lanczos3Filter, vertical: Lanczos3Filter) -> PixelImage {
        image.pixels.withUnsafeBufferPointer { source in fused(image.rows(source), horizontal: horizontal, vertical: vertical) }
    }

    /// `fused` on rows as they come (from a decoder: `LibJPEGRowReader`), so that the source image is never
    /// held whole. Returns the image resampled to `width` × `height`; when the rows stop early, its remaining
    /// rows are undefined (the caller throws the decoder's error).
    static func resize(_ source: Rows, width: Int, height: Int) -> PixelImage {
        fused(source, horizontal: Lanczos3Filter(inputSize: source.width, outputSize: width),
              vertical: Lanczos3Filter(inputSize: source.height, outputSize: height))
    }

    static func fused(_ source: Rows, horizontal: Lanczos3Filter, vertical: Lanczos3Filter) -> PixelImage {
        let stride = horizontal.outputSize * source.channels, outH = vertical.outputSize
        let depth = vertical.taps + 8
        var ring = [UInt8](repeating: 0, count: depth * stride)
        var strip = [UInt8](repeating: 0, count: 8 * stride)
        let pixels = [UInt8](unsafeUninitializedCapacity: stride * outH) { out, count in
            HugePages.advise(out)
            ring.withUnsafeMutableBufferPointer { ringBuffer in
                strip.withUnsafeMutableBufferPointer { stripBuffer in
                    let ring = ringBuffer.baseAddress!, made = stripBuffer.baseAddress!
                    var rows = [UnsafePointer<UInt8>](repeating: UnsafePointer(ring), count: vertical.taps)
                    var next = 0
                    horizontalStrips(of: source, filter: horizontal, into: { _ in made }) { y0, count in
                        for r in 0..<count {
                            (ring + ((y0 + r) % depth) * stride).update(from: made + r * stride, count: stride)
                        }
                        while next < outH && vertical.starts[next] + vertical.counts[next] <= y0 + count {
                            let n = vertical.counts[next], first = vertical.starts[next]
                            for k in 0..<n { rows[k] = UnsafePointer(ring + ((first + k) % depth) * stride) }
                            let weights = vertical.weights[(next * vertical.taps)..<(next * vertical.taps + n)]
                            verticalRow(rows: rows, weights: weights, count: n, stride: stride, into: out.baseAddress! + next * stride)
                            next += 1
                        }
                    }
                }
            }
            count = stride * outH
        }
        return PixelImage(width: horizontal.outputSize, height: outH, channels: source.channels, pixels: pixels)
    }

    /// Interleaves `rows` (≤ 8) rows of `samples` bytes: byte `r` of group `i` is sample `i` of row `r`.
    @inline(__always)
    static func transpose(_ src: UnsafePointer<UInt8>, rows: Int, samples n: Int, into lanes: UnsafeMutablePointer<UInt8>) {
        guard rows == 8 else {
            for r in 0..<rows {
                let row = src + r * n
                for i in 0..<n { lanes[i &* 8 &+ r] = row[i] }
            }
            return
        }
        let out = UnsafeMutableRawPointer(lanes)
        for i in 0..<n {
            var v = UInt64(src[i])
            v |= UInt64(src[i &+ n]) << 8
            v |= UInt64(src[i &+ 2 &* n]) << 16
            v |= UInt64(src[i &+ 3 &* n]) << 24
            v |= UInt64(src[i &+ 4 &* n]) << 32
            v |= UInt64(src[i &+ 5 &* n]) << 40
            v |= UInt64(src[i &+ 6 &* n]) << 48
            v |= UInt64(src[i &+ 7 &* n]) << 56
            out.storeBytes(of: v, toByteOffset: i &* 8, as: UInt64.self)
        }
    }

    /// Eight accumulators to eight bytes, packed in a word (lane 0 in the low byte).
    @inline(__always)
    static func narrow(_ acc: SIMD8<Int32>) -> UInt64 {
        let bytes = SIMD8<UInt8>(truncatingIfNeeded: pointwiseMin(pointwiseMax(acc &>> Lanczos3Filter.precisionBits, .zero), SIMD8(repeating: 255)))
        return unsafeBitCast(bytes, to: UInt64.self)
    }

    /// The output pixels of one transposed RGB strip, `rows` of them per column.
    static func horizontalStripRGB(
        _ columns: UnsafeRawPointer, rows: Int, outW: Int, weights: UnsafePointer<Int32>, taps: Int,
        starts: UnsafePointer<Int>, counts: UnsafePointer<Int>, into out: UnsafeMutablePointer<UInt8>
    ) {
        let half = SIMD8<Int32>(repeating: Lanczos3Filter.one >> 1)
        let rowStride = outW * 3
        for x in 0..<outW {
            let w = weights + x * taps
            var p = columns + starts[x] * 24
            var r = half, g = half, b = half
            for k in 0..<counts[x] {
                let wk = SIMD8<Int32>(repeating: w[k])
                r &+= SIMD8<Int32>(truncatingIfNeeded: p.loadUnaligned(as: SIMD8<UInt8>.self)) &* wk
                g &+= SIMD8<Int32>(truncatingIfNeeded: p.loadUnaligned(fromByteOffset: 8, as: SIMD8<UInt8>.self)) &* wk
                b &+= SIMD8<Int32>(truncatingIfNeeded: p.loadUnaligned(fromByteOffset: 16, as: SIMD8<UInt8>.self)) &* wk
                p += 24
            }
            // Narrowed as vectors and read back as words: left to itself, the compiler clamps lane by lane.
            var (r8, g8, b8) = (narrow(r), narrow(g), narrow(b))
            var o = out + x * 3
            for _ in 0..<rows {
                o[0] = UInt8(truncatingIfNeeded: r8)
                o[1] = UInt8(truncatingIfNeeded: g8)
                o[2] = UInt8(truncatingIfNeeded: b8)
                (r8, g8, b8) = (r8 >> 8, g8 >> 8, b8 >> 8)
                o += rowStride
            }
        }
    }

    /// The output pixels of one transposed grey strip.
    static func horizontalStripGrey(
        _ columns: UnsafeRawPointer, rows: Int, outW: Int, weights: UnsafePointer<Int32>, taps: Int,
        starts: UnsafePointer<Int>, counts: UnsafePointer<Int>, into out: UnsafeMutablePointer<UInt8>
    ) {
        let half = SIMD8<Int32>(repeating: Lanczos3Filter.one >> 1)
        for x in 0..<outW {
            let w = weights + x * taps
            var p = columns + starts[x] * 8
            var v = half
            for k in 0..<counts[x] {
                v &+= SIMD8<Int32>(truncatingIfNeeded: p.loadUnaligned(as: SIMD8<UInt8>.self)) &* SIMD8<Int32>(repeating: w[k])
                p += 8
            }
            var v8 = narrow(v)
            for lane in 0..<rows {
                out[lane * outW + x] = UInt8(truncatingIfNeeded: v8)
                v8 >>= 8
            }
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
            // Clamped to 0...255 with shifts and masks, which stay vector instructions in place: `clamped(lowerBound:upperBound:)`
            // calls the standard library's `pointwiseMin` and `pointwiseMax` out of line, and `replace(with:where:)` compiles
            // to a loop over the lanes. `v & ~(v >> 31)` is max(v, 0); 255 + min(v - 255, 0) is min(v, 255).
            let shifted = acc &>> Lanczos3Filter.precisionBits
            let low = shifted & ~(shifted &>> 31)
            let over = low &- 255
            let clamped = (over & (over &>> 31)) &+ 255
            UnsafeMutableRawPointer(out + x).storeBytes(of: SIMD16<UInt8>(truncatingIfNeeded: clamped), as: SIMD16<UInt8>.self)
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

extension PixelImage {
    /// This image's rows for the horizontal pass, from its pixels (`source`, which must outlive the pass).
    func rows(_ source: UnsafeBufferPointer<UInt8>) -> Resizer.Rows {
        let stride = width * channels
        return Resizer.Rows(width: width, height: height, channels: channels) { y0, _ in source.baseAddress! + y0 * stride }
    }
}
