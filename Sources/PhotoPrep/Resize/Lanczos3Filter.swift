import Foundation

/// Fixed-point Lanczos3 weights for resampling one axis from `inputSize` to `outputSize` samples.
///
/// Output sample `i` covers the fractional source interval centred on `(i + 0.5) * scale`; when
/// shrinking, the kernel is stretched by the scale so that every source sample contributes
/// (the same geometry as Pillow's and libvips' reducers). Weights are 14-bit fixed point and each
/// output's weights sum to exactly `Lanczos3Filter.one`.
struct Lanczos3Filter {
    static let precisionBits: Int32 = 14
    static let one: Int32 = 1 << precisionBits

    let outputSize: Int
    /// First source sample of each output sample.
    let starts: [Int]
    /// Number of source samples of each output sample.
    let counts: [Int]
    /// `taps` weights per output sample (unused tail entries are zero).
    let weights: [Int32]
    let taps: Int

    init(inputSize: Int, outputSize: Int) {
        precondition(inputSize > 0 && outputSize > 0)
        let scale = Double(inputSize) / Double(outputSize)
        let stretch = max(scale, 1)
        let support = 3 * stretch
        let taps = Int((support * 2).rounded(.up)) + 1
        var starts = [Int](repeating: 0, count: outputSize)
        var counts = [Int](repeating: 0, count: outputSize)
        var weights = [Int32](repeating: 0, count: outputSize * taps)
        var real = [Double](repeating: 0, count: taps)
        for i in 0..<outputSize {
            let center = (Double(i) + 0.5) * scale
            let lo = max(0, Int((center - support).rounded(.down)))
            let hi = min(inputSize, Int((center + support).rounded(.up)))
            let count = min(hi - lo, taps)
            var sum = 0.0
            for k in 0..<count {
                let w = Self.lanczos3((Double(lo + k) + 0.5 - center) / stretch)
                real[k] = w
                sum += w
            }
            var fixedSum: Int32 = 0
            var peak = 0
            for k in 0..<count {
                let w = Int32((real[k] / sum * Double(Self.one)).rounded())
                weights[i * taps + k] = w
                fixedSum += w
                if real[k] > real[peak] { peak = k }
            }
            weights[i * taps + peak] += Self.one - fixedSum  // exact unity gain: flat areas stay flat
            starts[i] = lo
            counts[i] = count
        }
        self.outputSize = outputSize
        self.starts = starts
        self.counts = counts
        self.weights = weights
        self.taps = taps
    }

    /// sinc(x) · sinc(x / 3) on |x| < 3.
    static func lanczos3(_ x: Double) -> Double {
        if x == 0 { return 1 }
        guard abs(x) < 3 else { return 0 }
        let px = Double.pi * x
        return 3 * sin(px) * sin(px / 3) / (px * px)
    }
}
