import Foundation

/// The budget search as a pure state machine: it says which quality to encode next, the caller
/// encodes and reports the size back. No encode is ever trusted without its measured size.
///
/// It starts at the highest allowed quality (one encode when the budget does not bind), then
/// predicts with a secant on ln(size) against ln(libjpeg's quality scale factor), always inside the
/// bracket [highest fit, lowest miss]. It stops when the bracket is adjacent (the fit is provably
/// the largest quality under the budget) or when a fit lands within `tolerance` of the budget.
///
/// | sizes seen (budget 500 000)        | next step            |
/// |------------------------------------|----------------------|
/// | none                               | encode Q100          |
/// | Q100 → 420 000                     | done, Q100           |
/// | Q100 → 1 400 000                   | encode ≈ Q91 (prior) |
/// | Q100 → 1 400 000, Q91 → 505 000    | encode ≈ Q90 (secant)|
/// | Q91 → 505 000, Q90 → 470 000       | done, Q90 (adjacent) |
/// | Q50 → 900 000 (lowest allowed)     | unreachable          |
struct QualitySearch {
    enum Step: Equatable {
        case encode(quality: Int)
        case done(quality: Int)
        /// Even the lowest allowed quality is over the budget.
        case unreachable
    }

    let qualities: ClosedRange<Int>
    /// Encodes must be strictly smaller than this many bytes.
    let limit: Int
    let tolerance: Double
    /// d ln(size) / d ln(scale factor) assumed before two sizes are known.
    static let priorSlope = -0.5

    private(set) var fit: (quality: Int, size: Int)?
    private(set) var miss: (quality: Int, size: Int)?
    private var last: (quality: Int, size: Int)?

    init(qualities: ClosedRange<Int>, limit: Int, tolerance: Double) {
        self.qualities = qualities
        self.limit = limit
        self.tolerance = tolerance
    }

    mutating func record(quality: Int, size: Int) {
        if size < limit {
            if fit == nil || quality > fit!.quality { fit = (quality, size) }
        } else {
            if miss == nil || quality < miss!.quality { miss = (quality, size) }
        }
        last = (quality, size)
    }

    func next() -> Step {
        guard let last else { return .encode(quality: qualities.upperBound) }
        if let fit {
            if fit.quality == qualities.upperBound { return .done(quality: fit.quality) }
            if let miss, miss.quality == fit.quality + 1 { return .done(quality: fit.quality) }
            if Double(fit.size) >= Double(limit) * (1 - tolerance) { return .done(quality: fit.quality) }
        }
        if let miss, miss.quality == qualities.lowerBound { return .unreachable }

        let target = log(Double(limit) * (1 - tolerance / 2))
        let anchor = miss ?? fit ?? last
        var slope = Self.priorSlope
        if let fit, let miss {
            let dx = Self.logScale(fit.quality) - Self.logScale(miss.quality)
            let measured = (log(Double(fit.size)) - log(Double(miss.size))) / dx
            if measured.isFinite && measured < -0.05 { slope = measured }
        }
        let x = Self.logScale(anchor.quality) + (target - log(Double(anchor.size))) / slope
        var quality = Int(Self.quality(forLogScale: x).rounded(.down))
        let low = max(qualities.lowerBound, (fit?.quality ?? qualities.lowerBound - 1) + 1)
        let high = min(qualities.upperBound, (miss?.quality ?? qualities.upperBound + 1) - 1)
        quality = min(max(quality, low), high)
        return .encode(quality: quality)
    }

    /// ln of libjpeg's quality scale factor (`jpeg_quality_scaling`), with Q100's 0 taken as 1.
    static func logScale(_ quality: Int) -> Double {
        let q = Double(min(max(quality, 1), 100))
        let factor = q < 50 ? 5000 / q : 200 - 2 * q
        return log(max(factor, 1))
    }

    /// The inverse of `logScale`, on a continuous quality axis.
    static func quality(forLogScale x: Double) -> Double {
        let factor = exp(x)
        return factor <= 100 ? (200 - factor) / 2 : 5000 / factor
    }
}
