#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The colour space SSIMULACRA2 compares in: JPEG XL's XYB (LMS-like cone responses, cube-rooted), shifted so that
/// every value is positive — X·14 + 0.42, Y + 0.01, (B − Y) + 0.55 — as the metric's reference implementation does
/// (`MakePositiveXYB`, SSIMULACRA 2.1). The conversion from linear light runs row by row in C
/// (`photoprep_metric_xyb`); here is the step before it.
enum XYB {
    /// sRGB-encoded byte → linear light, IEC 61966-2-1's two-part curve.
    static let linear: [Float] = (0..<256).map { value in
        let v = Double(value) / 255
        return Float(v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4))
    }
}
