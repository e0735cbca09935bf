#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Fixed-point Lanczos3 weights for resampling one axis from `inputSize` to `outputSize` samples.
///
/// The geometry and rounding are Pillow's (`libImaging/Resample.c`), so that our output matches the
/// reference resize the benchmarks measure quality against: output sample `i` is centred on
/// `(i + 0.5) * scale` in the source, the kernel is stretched by the scale when shrinking, the
/// window is `[Int(centre − support + 0.5), Int(centre + support + 0.5))`, and the normalised weights
/// are rounded (half away from zero) to 22-bit fixed point.
struct Lanczos3Filter {
    static let precisionBits: Int32 = 22
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
        let taps = Int(support.rounded(.up)) * 2 + 1
        var starts = [Int](repeating: 0, count: outputSize)
        var counts = [Int](repeating: 0, count: outputSize)
        var weights = [Int32](repeating: 0, count: outputSize * taps)
        var real = [Double](repeating: 0, count: taps)
        // sin(πx/3) of tap k by rotating tap k − 1's by the taps' spacing, π/3 / stretch: one sin and one cos a
        // sample, not two sines a tap (a 2048-px resize computed 50,000 of them).
        let third = Double.pi / 3
        let (stepSin, stepCos) = (sin(third / stretch), cos(third / stretch))
        for i in 0..<outputSize {
            let center = (Double(i) + 0.5) * scale
            let lo = max(0, Int(center - support + 0.5))
            let hi = min(inputSize, Int(center + support + 0.5))
            let count = min(hi - lo, taps)
            let x0 = (Double(lo) - center + 0.5) / stretch
            var s = sin(third * x0), c = cos(third * x0)
            var sum = 0.0
            for k in 0..<count {
                let w = Self.lanczos3((Double(lo + k) - center + 0.5) / stretch, sinThird: s)
                real[k] = w
                sum += w
                (s, c) = (s * stepCos + c * stepSin, c * stepCos - s * stepSin)
            }
            for k in 0..<count {
                let w = real[k] / (sum == 0 ? 1 : sum) * Double(Self.one)
                weights[i * taps + k] = Int32(w < 0 ? w - 0.5 : w + 0.5)
            }
            starts[i] = lo
            counts[i] = count
        }
        self.outputSize = outputSize
        self.starts = starts
        self.counts = counts
        self.weights = weights
        self.taps = taps
    }

    /// sinc(x) · sinc(x / 3) on −3 ≤ x < 3, from `sinThird` = sin(πx/3): with t = πx/3, sin(πx) = sin 3t =
    /// s(3 − 4s²), so it is s²(3 − 4s²) / 3t², and no second sine (`ResizerTests` holds it to the direct formula).
    static func lanczos3(_ x: Double, sinThird s: Double) -> Double {
        guard x >= -3 && x < 3 else { return 0 }
        if x == 0 { return 1 }
        let t = Double.pi / 3 * x
        return s * s * (3 - 4 * s * s) / (3 * t * t)
    }
}
