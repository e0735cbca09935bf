internal import CMetric
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
/// Scored against a reference kept from before (`ScoringReference`), a scale keeps the reference's rows as they pass
/// (`Reference.keep`) or takes them (`Reference.take`) instead of the reference's XYB and its four blurs of a and a².
///
/// The blur is the reference Python implementation's (`ssimulacra2` on PyPI, the benchmarks' judge): a Gaussian of
/// σ 1.5 truncated at 3.33σ (11 taps), zero left and right of the image and mirrored above and below it ("reflect":
/// d c b a | a b c d). (That implementation pads its first axis with zeros and mirrors the second, on planes it holds
/// transposed — `linear.T` — so its zeros fall left and right.)
final class MetricScale {
    /// What a scale does with the reference's rows besides computing them from its pixels.
    enum Reference {
        /// Computes them and keeps them here.
        case keep(MetricReferenceRows)
        /// Takes them from here: the reference's pixels are not read.
        case take(MetricReferenceRows)
    }

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
    private let reference: Reference?
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
    /// The eleven rows a blurred plane's vertical blur reads, for the row being emitted.
    private let taps: UnsafeMutablePointer<UnsafePointer<Float>>
    /// One row's vertical blur of the five planes, and its three maps (SSIM, artefact, detail loss).
    private let vertical: UnsafeMutablePointer<Float>
    private let maps: UnsafeMutablePointer<Float>
    private var rowsIn = 0
    private var rowsOut = 0

    /// A scale of `width` × `height` and, while both halves are at least 8 px and fewer than six scales are made, the
    /// next ones below it. `kept`: the reference's rows of each scale, this one first, to keep (`taking` false) or to take.
    init(width: Int, height: Int, scalesLeft: Int, kept: ArraySlice<MetricReferenceRows> = [], taking: Bool = false) {
        self.width = width
        self.height = height
        stride = (width + 7) / 8 * 8
        reference = kept.first.map { taking ? .take($0) : .keep($0) }
        let nextWidth = (width + 1) / 2, nextHeight = (height + 1) / 2
        next = scalesLeft > 1 && nextWidth >= 8 && nextHeight >= 8
            ? MetricScale(width: nextWidth, height: nextHeight, scalesLeft: scalesLeft - 1, kept: kept.dropFirst(), taking: taking) : nil
        xyb = .allocate(capacity: Self.taps * 6 * stride)
        blurred = .allocate(capacity: Self.taps * 15 * stride)
        padded = .allocate(capacity: stride + 2 * Self.radius + 8)
        pending = .allocate(capacity: 6 * width)
        halved = .allocate(capacity: 6 * nextWidth)
        taps = .allocate(capacity: Self.taps)
        vertical = .allocate(capacity: 5 * stride)
        maps = .allocate(capacity: 3 * stride)
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
        taps.deallocate()
        vertical.deallocate()
        maps.deallocate()
    }

    /// Every scale's sums, this one first.
    var allSums: [[Double]] { [sums] + (next?.allSums ?? []) }
    /// Every scale's pixel count, this one first.
    var pixelsPerScale: [Int] { [width * height] + (next?.pixelsPerScale ?? []) }

    /// The sizes of a scale of `width` × `height` and of those `init` makes below it, this one first.
    static func sizes(width: Int, height: Int, scalesLeft: Int) -> [(width: Int, height: Int)] {
        let nextWidth = (width + 1) / 2, nextHeight = (height + 1) / 2
        let below = scalesLeft > 1 && nextWidth >= 8 && nextHeight >= 8 ? sizes(width: nextWidth, height: nextHeight, scalesLeft: scalesLeft - 1) : []
        return [(width, height)] + below
    }

    private func xybRow(_ image: Int, _ channel: Int, _ row: Int) -> UnsafeMutablePointer<Float> {
        xyb + ((row % Self.taps) * 6 + image * 3 + channel) * stride
    }

    private func blurredRow(_ plane: Int, _ channel: Int, _ row: Int) -> UnsafeMutablePointer<Float> {
        blurred + ((row % Self.taps) * 15 + channel * 5 + plane) * stride
    }

    /// Takes the next row of each image: `width` pixels of interleaved linear RGB (`first`, the reference's, is not
    /// read when its rows are taken).
    func push(_ first: UnsafePointer<Float>, _ second: UnsafePointer<Float>) {
        let row = rowsIn
        rowsIn += 1
        let n = Int32(width)
        if case .take(let kept) = reference {
            for c in 0..<3 { xybRow(0, c, row).update(from: kept.xyb(row, c), count: width) }
        } else {
            photoprep_metric_xyb(first, n, xybRow(0, 0, row), xybRow(0, 1, row), xybRow(0, 2, row))
            if case .keep(let kept) = reference {
                for c in 0..<3 { kept.xyb(row, c).initialize(from: xybRow(0, c, row), count: width) }
            }
        }
        photoprep_metric_xyb(second, n, xybRow(1, 0, row), xybRow(1, 1, row), xybRow(1, 2, row))
        Self.kernel.withUnsafeBufferPointer { kernel in
            let k = kernel.baseAddress!
            for c in 0..<3 {
                let a = UnsafePointer(xybRow(0, c, row)), b = UnsafePointer(xybRow(1, c, row))
                if !taking { photoprep_metric_blur_row(a, nil, 0, n, k, padded, blurredRow(0, c, row)) }
                photoprep_metric_blur_row(b, nil, 0, n, k, padded, blurredRow(1, c, row))
                if !taking { photoprep_metric_blur_row(a, nil, 1, n, k, padded, blurredRow(2, c, row)) }
                photoprep_metric_blur_row(b, nil, 1, n, k, padded, blurredRow(3, c, row))
                photoprep_metric_blur_row(a, b, 0, n, k, padded, blurredRow(4, c, row))
            }
        }
        if row >= Self.radius { emit(row - Self.radius) }
        if let next { downsample(first, second, into: next) }
    }

    /// Ends the scale: the last rows' sums (mirrored below them), and the scales below.
    func finish() {
        while rowsOut < height { emit(rowsOut) }
        if let next {
            if hasPending {  // an odd last row: averaged with itself, as the reference averages what there is
                if !taking { halve(pending, into: halved) }
                halve(pending + 3 * width, into: halved + 3 * next.width)
                next.push(halved, halved + 3 * next.width)
            }
            next.finish()
        }
    }

    /// The vertical blur of row `y`'s five planes, folded into the maps' sums.
    private func emit(_ y: Int) {
        rowsOut += 1
        let n = Int32(width)
        Self.kernel.withUnsafeBufferPointer { kernel in
            sums.withUnsafeMutableBufferPointer { sums in
                for c in 0..<3 {
                    for plane in 0..<5 {
                        let ofReference = plane == 0 || plane == 2  // a and a²
                        if ofReference, case .take(let kept) = reference {
                            (vertical + plane * stride).update(from: kept.blurred(y, square: plane == 2, c), count: width)
                            continue
                        }
                        for t in 0..<Self.taps {
                            var source = y - Self.radius + t
                            if source < 0 { source = -source - 1 }  // mirrored above and below
                            if source >= height { source = 2 * height - 1 - source }
                            taps[t] = UnsafePointer(blurredRow(plane, c, source))
                        }
                        photoprep_metric_vertical(taps, n, kernel.baseAddress!, vertical + plane * stride)
                        if ofReference, case .keep(let kept) = reference {
                            kept.blurred(y, square: plane == 2, c).initialize(from: vertical + plane * stride, count: width)
                        }
                    }
                    photoprep_metric_maps(
                        vertical, vertical + stride, vertical + 2 * stride, vertical + 3 * stride, vertical + 4 * stride,
                        xybRow(0, c, y), xybRow(1, c, y), n, maps, sums.baseAddress! + 6 * c)
                }
            }
        }
    }

    /// Whether the reference's rows are taken: its pixels are then not read, nor averaged for the next scale.
    private var taking: Bool {
        if case .take = reference { true } else { false }
    }

    /// Pairs rows for the next scale: an even row waits, an odd one is averaged 2 × 2 with it.
    private func downsample(_ first: UnsafePointer<Float>, _ second: UnsafePointer<Float>, into next: MetricScale) {
        if !hasPending {
            if !taking { pending.update(from: first, count: 3 * width) }
            (pending + 3 * width).update(from: second, count: 3 * width)
            hasPending = true
            return
        }
        hasPending = false
        for (i, row) in [first, second].enumerated() where i == 1 || !taking {
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
    private func halve(_ row: UnsafePointer<Float>, into out: UnsafeMutablePointer<Float>) {
        let nextWidth = (width + 1) / 2
        for ox in 0..<nextWidth {
            let x0 = 2 * ox, x1 = min(2 * ox + 1, width - 1)
            for ch in 0..<3 {
                out[3 * ox + ch] = x1 == x0 ? row[3 * x0 + ch] : 0.5 * (row[3 * x0 + ch] + row[3 * x1 + ch])
            }
        }
    }
}
