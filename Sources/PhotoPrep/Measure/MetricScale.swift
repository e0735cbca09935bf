#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One of SSIMULACRA2's six scales, fed the two images' rows of linear RGB top to bottom and never holding more than
/// eleven rows of each plane: each row is turned into positive XYB, its five products (a, b, a², b², ab per channel)
/// blurred horizontally into a ring of eleven rows, and once the rows below are in, each row's vertical blur is
/// folded straight into the SSIM and edge-difference sums. Every second row pair is averaged 2 × 2 and handed to the
/// next scale. So a 2048 px photo is scored in about 4 MB, where whole planes would take 100.
///
/// The blur is the reference Python implementation's (`ssimulacra2` on PyPI, the benchmarks' judge): a Gaussian of
/// σ 1.5 truncated at 3.33σ (11 taps), zero left and right of the image and mirrored above and below it ("reflect":
/// d c b a | a b c d). (That implementation pads its first axis with zeros and mirrors the second, on planes it holds
/// transposed — `linear.T` — so its zeros fall left and right.)
final class MetricScale {
    static let radius = 5
    static let taps = 2 * radius + 1
    /// scipy's `gaussian_filter1d` kernel for σ 1.5, truncate 3.33.
    static let kernel: [Float] = {
        let weights: [Double] = (-radius...radius).map { (x: Int) -> Double in exp(-0.5 * Double(x * x) / 2.25) }
        let sum = weights.reduce(0, +)
        return weights.map { Float($0 / sum) }
    }()

    let width: Int
    let height: Int
    /// Floats per row in the rings: the width rounded up to whole vectors.
    private let stride: Int
    private let next: MetricScale?
    /// Per channel: sums of the SSIM map's d and d⁴, the artefact map's and the detail-loss map's values and 4th powers.
    private(set) var sums = [Double](repeating: 0, count: 18)

    /// XYB rows of both images (ring of 11 rows × 3 channels × 2 images).
    private let xyb: UnsafeMutablePointer<Float>
    /// Horizontally blurred rows: a, b, a², b², ab per channel (ring of 11 rows × 3 channels × 5).
    private let blurred: UnsafeMutablePointer<Float>
    /// One row padded by the radius on each side, for the horizontal blur.
    private let padded: UnsafeMutablePointer<Float>
    /// The linear rows of an even row, waiting for the odd one below to be averaged for the next scale.
    private let pending: UnsafeMutablePointer<Float>
    private var hasPending = false
    private let halved: UnsafeMutablePointer<Float>
    private var rowsIn = 0
    private var rowsOut = 0

    /// A scale of `width` × `height` and, while both halves are at least 8 px and fewer than six scales are made, the
    /// next ones below it.
    init(width: Int, height: Int, scalesLeft: Int) {
        self.width = width
        self.height = height
        stride = (width + 7) / 8 * 8
        let nextWidth = (width + 1) / 2, nextHeight = (height + 1) / 2
        next = scalesLeft > 1 && nextWidth >= 8 && nextHeight >= 8
            ? MetricScale(width: nextWidth, height: nextHeight, scalesLeft: scalesLeft - 1) : nil
        xyb = .allocate(capacity: Self.taps * 6 * stride)
        blurred = .allocate(capacity: Self.taps * 15 * stride)
        padded = .allocate(capacity: stride + 2 * Self.radius + 8)
        pending = .allocate(capacity: 6 * width)
        halved = .allocate(capacity: 6 * nextWidth)
        xyb.initialize(repeating: 0, count: Self.taps * 6 * stride)
        blurred.initialize(repeating: 0, count: Self.taps * 15 * stride)
        padded.initialize(repeating: 0, count: stride + 2 * Self.radius + 8)
    }

    deinit {
        xyb.deallocate()
        blurred.deallocate()
        padded.deallocate()
        pending.deallocate()
        halved.deallocate()
    }

    /// Every scale's sums, this one first.
    var allSums: [[Double]] { [sums] + (next?.allSums ?? []) }
    /// Every scale's pixel count, this one first.
    var pixelsPerScale: [Int] { [width * height] + (next?.pixelsPerScale ?? []) }

    private func xybRow(_ image: Int, _ channel: Int, _ row: Int) -> UnsafeMutablePointer<Float> {
        xyb + ((row % Self.taps) * 6 + image * 3 + channel) * stride
    }

    private func blurredRow(_ plane: Int, _ channel: Int, _ row: Int) -> UnsafeMutablePointer<Float> {
        blurred + ((row % Self.taps) * 15 + channel * 5 + plane) * stride
    }

    /// Takes the next row of each image: `width` pixels of interleaved linear RGB.
    func push(_ first: UnsafePointer<Float>, _ second: UnsafePointer<Float>) {
        let row = rowsIn
        rowsIn += 1
        XYB.convert(first, count: width, x: xybRow(0, 0, row), y: xybRow(0, 1, row), b: xybRow(0, 2, row))
        XYB.convert(second, count: width, x: xybRow(1, 0, row), y: xybRow(1, 1, row), b: xybRow(1, 2, row))
        for c in 0..<3 {
            let a = xybRow(0, c, row), b = xybRow(1, c, row)
            blur(a, into: blurredRow(0, c, row)) { a, _ in a }
            blur(b, into: blurredRow(1, c, row)) { b, _ in b }
            blur(a, into: blurredRow(2, c, row)) { a, _ in a * a }
            blur(b, into: blurredRow(3, c, row)) { b, _ in b * b }
            blur(a, b, into: blurredRow(4, c, row)) { a, b in a * b }
        }
        if row >= Self.radius { emit(row - Self.radius) }
        if let next { downsample(first, second, into: next) }
    }

    /// Ends the scale: the last rows' sums (mirrored below them), and the scales below.
    func finish() {
        while rowsOut < height { emit(rowsOut) }
        if let next {
            if hasPending {  // an odd last row: averaged with itself, as the reference averages what there is
                halve(pending, rows: 1, into: halved)
                halve(pending + 3 * width, rows: 1, into: halved + 3 * next.width)
                next.push(halved, halved + 3 * next.width)
            }
            next.finish()
        }
    }

    /// `out[x] = Σ kernel[k] · f(a, b)[x + k − 5]`, zero outside the row, through the padded row.
    @inline(__always)
    private func blur(
        _ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>? = nil, into out: UnsafeMutablePointer<Float>,
        _ f: (Float, Float) -> Float
    ) {
        let r = Self.radius
        let p = padded + r
        if let b {
            for x in 0..<width { p[x] = f(a[x], b[x]) }
        } else {
            for x in 0..<width { p[x] = f(a[x], 0) }
        }
        for k in 1...r {
            p[-k] = 0
            p[width - 1 + k] = 0
        }
        let k = Self.kernel
        let w0 = k[0], w1 = k[1], w2 = k[2], w3 = k[3], w4 = k[4], w5 = k[5]
        var x = 0
        while x < width {
            let s = padded + x
            @inline(__always) func at(_ i: Int) -> SIMD8<Float> { UnsafeRawPointer(s + i).loadUnaligned(as: SIMD8<Float>.self) }
            var sum = w5 * at(5)
            sum += w4 * (at(4) + at(6))
            sum += w3 * (at(3) + at(7))
            sum += w2 * (at(2) + at(8))
            sum += w1 * (at(1) + at(9))
            sum += w0 * (at(0) + at(10))
            UnsafeMutableRawPointer(out + x).storeBytes(of: sum, as: SIMD8<Float>.self)
            x += 8
        }
    }

    /// The vertical blur of row `y`'s five planes, folded into the maps' sums.
    private func emit(_ y: Int) {
        rowsOut += 1
        let k = Self.kernel
        let k0 = SIMD8<Float>(repeating: k[0]), k1 = SIMD8<Float>(repeating: k[1]), k2 = SIMD8<Float>(repeating: k[2])
        let k3 = SIMD8<Float>(repeating: k[3]), k4 = SIMD8<Float>(repeating: k[4]), k5 = SIMD8<Float>(repeating: k[5])
        let c1 = SIMD8<Float>(repeating: 0.0009)
        // The lanes past the row's end hold what earlier rows left there: kept out of the sums.
        let lanePastEnd = SIMD8<Int32>(0, 1, 2, 3, 4, 5, 6, 7) .>= SIMD8<Int32>(repeating: Int32(width % 8 == 0 ? 8 : width % 8))
        for c in 0..<3 {
            var rows = [UnsafePointer<Float>](repeating: UnsafePointer(xyb), count: Self.taps * 5)
            for t in 0..<Self.taps {
                var source = y - Self.radius + t
                if source < 0 { source = -source - 1 }  // mirrored above and below
                if source >= height { source = 2 * height - 1 - source }
                for plane in 0..<5 { rows[plane * Self.taps + t] = UnsafePointer(blurredRow(plane, c, source)) }
            }
            let img1 = xybRow(0, c, y), img2 = xybRow(1, c, y)
            var ssim = SIMD8<Float>(), ssim4 = SIMD8<Float>(), art = SIMD8<Float>(), art4 = SIMD8<Float>()
            var lost = SIMD8<Float>(), lost4 = SIMD8<Float>()
            var rowSums = [Double](repeating: 0, count: 6)
            rows.withUnsafeBufferPointer { rows in
                var x = 0
                while x < width {
                    @inline(__always) func vertical(_ plane: Int) -> SIMD8<Float> {
                        let r = rows.baseAddress! + plane * 11
                        @inline(__always) func at(_ t: Int) -> SIMD8<Float> { UnsafeRawPointer(r[t] + x).loadUnaligned(as: SIMD8<Float>.self) }
                        var sum = k5 * at(5)
                        sum += k4 * (at(4) + at(6))
                        sum += k3 * (at(3) + at(7))
                        sum += k2 * (at(2) + at(8))
                        sum += k1 * (at(1) + at(9))
                        sum += k0 * (at(0) + at(10))
                        return sum
                    }
                    let mu1 = vertical(0), mu2 = vertical(1), s11 = vertical(2), s22 = vertical(3), s12 = vertical(4)
                    let a = UnsafeRawPointer(img1 + x).loadUnaligned(as: SIMD8<Float>.self)
                    let b = UnsafeRawPointer(img2 + x).loadUnaligned(as: SIMD8<Float>.self)
                    let last = x + 8 > width
                    let diff = mu1 - mu2
                    let one = SIMD8<Float>(repeating: 1)
                    let numM: SIMD8<Float> = one - diff * diff
                    let covariance: SIMD8<Float> = s12 - mu1 * mu2
                    let numS: SIMD8<Float> = 2 * covariance + c1
                    let variance1: SIMD8<Float> = s11 - mu1 * mu1
                    let variance2: SIMD8<Float> = s22 - mu2 * mu2
                    let denS: SIMD8<Float> = variance1 + variance2 + c1
                    let ratio: SIMD8<Float> = numM * numS / denS
                    var d = pointwiseMax(one - ratio, SIMD8<Float>())
                    let off2: SIMD8<Float> = b - mu2, off1: SIMD8<Float> = a - mu1
                    let edge2: SIMD8<Float> = one + pointwiseMax(off2, -off2)
                    let edge1: SIMD8<Float> = one + pointwiseMax(off1, -off1)
                    var edge: SIMD8<Float> = edge2 / edge1 - one
                    if last {
                        d.replace(with: 0, where: lanePastEnd)
                        edge.replace(with: 0, where: lanePastEnd)
                    }
                    ssim += d
                    let d2 = d * d
                    ssim4 += d2 * d2
                    let artefact = pointwiseMax(edge, SIMD8<Float>())
                    let detail = pointwiseMax(-edge, SIMD8<Float>())
                    art += artefact
                    let a2 = artefact * artefact
                    art4 += a2 * a2
                    lost += detail
                    let l2 = detail * detail
                    lost4 += l2 * l2
                    x += 8
                    if x % 512 == 0 || x >= width {  // keep the float sums short
                        for (i, v) in [ssim, ssim4, art, art4, lost, lost4].enumerated() { rowSums[i] += Double(v.sum()) }
                        ssim = .init(); ssim4 = .init(); art = .init(); art4 = .init(); lost = .init(); lost4 = .init()
                    }
                }
            }
            for i in 0..<6 { sums[c * 6 + i] += rowSums[i] }
        }
    }

    /// Pairs rows for the next scale: an even row waits, an odd one is averaged 2 × 2 with it.
    private func downsample(_ first: UnsafePointer<Float>, _ second: UnsafePointer<Float>, into next: MetricScale) {
        if !hasPending {
            pending.update(from: first, count: 3 * width)
            (pending + 3 * width).update(from: second, count: 3 * width)
            hasPending = true
            return
        }
        hasPending = false
        for (i, row) in [first, second].enumerated() {
            let above = UnsafePointer(pending + i * 3 * width)
            let out = halved + i * 3 * next.width
            for ox in 0..<next.width {
                let x0 = 2 * ox, x1 = min(2 * ox + 1, width - 1)
                for ch in 0..<3 {  // at an odd right edge x1 == x0: the two pixels there, averaged
                    out[3 * ox + ch] = 0.25 * (above[3 * x0 + ch] + above[3 * x1 + ch] + row[3 * x0 + ch] + row[3 * x1 + ch])
                }
            }
        }
        next.push(halved, halved + 3 * next.width)
    }

    /// Averages one row's horizontal pairs (an odd last row, alone).
    private func halve(_ row: UnsafePointer<Float>, rows: Int, into out: UnsafeMutablePointer<Float>) {
        let nextWidth = (width + 1) / 2
        for ox in 0..<nextWidth {
            let x0 = 2 * ox, x1 = min(2 * ox + 1, width - 1)
            for ch in 0..<3 {
                out[3 * ox + ch] = x1 == x0 ? row[3 * x0 + ch] : 0.5 * (row[3 * x0 + ch] + row[3 * x1 + ch])
            }
        }
    }
}
