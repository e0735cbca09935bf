#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The colour space SSIMULACRA2 compares in: JPEG XL's XYB (LMS-like cone responses, cube-rooted), shifted so that
/// every value is positive — X·14 + 0.42, Y + 0.01, (B − Y) + 0.55 — as the metric's reference implementation does
/// (`MakePositiveXYB`, SSIMULACRA 2.1).
enum XYB {
    /// sRGB-encoded byte → linear light, IEC 61966-2-1's two-part curve.
    static let linear: [Float] = (0..<256).map { value in
        let v = Double(value) / 255
        return Float(v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4))
    }

    // The opsin absorbance matrix and bias (libjxl `opsin_params.h`).
    private static let m00: Float = 0.30, m02: Float = 0.078, m01: Float = 1 - 0.078 - 0.30
    private static let m10: Float = 0.23, m12: Float = 0.078, m11: Float = 1 - 0.078 - 0.23
    private static let m20: Float = 0.24342268924547819, m21: Float = 0.20476744424496821
    private static let m22: Float = 1 - 0.24342268924547819 - 0.20476744424496821
    private static let bias: Float = 0.0037930732552754493
    private static let cbrtBias: Float = Float(pow(0.0037930732552754493, 1.0 / 3))

    /// Converts `count` pixels of interleaved linear RGB at `rgb` to the three positive XYB planes' rows.
    static func convert(
        _ rgb: UnsafePointer<Float>, count: Int,
        x: UnsafeMutablePointer<Float>, y: UnsafeMutablePointer<Float>, b: UnsafeMutablePointer<Float>
    ) {
        for i in 0..<count {
            let r = rgb[3 * i], g = rgb[3 * i + 1], bl = rgb[3 * i + 2]
            let l = cubeRoot(max(m00 * r + m01 * g + m02 * bl + bias, 0)) - cbrtBias
            let m = cubeRoot(max(m10 * r + m11 * g + m12 * bl + bias, 0)) - cbrtBias
            let s = cubeRoot(max(m20 * r + m21 * g + m22 * bl + bias, 0)) - cbrtBias
            let yy = 0.5 * (l + m)
            x[i] = 0.5 * (l - m) * 14 + 0.42
            y[i] = yy + 0.01
            b[i] = (s - yy) + 0.55
        }
    }

    /// ∛v for v ≥ 0 without a library call: an exponent-thirding first guess, then three Newton steps
    /// (relative error below 1e-7 on [1e-6, 2], the range the opsin responses take).
    @inline(__always)
    static func cubeRoot(_ v: Float) -> Float {
        guard v > 0 else { return 0 }
        var guess = Float(bitPattern: v.bitPattern / 3 + 709_921_077)
        for _ in 0..<3 { guess = (2 * guess + v / (guess * guess)) * (1.0 / 3.0) }
        return guess
    }
}
