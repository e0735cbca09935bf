#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// SSIMULACRA 2.1, the perceptual metric of Cloudinary and JPEG XL: how close `distorted` looks to `reference`, on a
/// scale where 90 is indistinguishable in a flicker test at 1:1, 85 in a flip test, 80 side by side, 70 shows
/// artefacts only to a careful look, 50 is medium quality and 30 low.
///
/// Computed as the `ssimulacra2` package on PyPI computes it (the independent implementation the benchmarks judge
/// with): XYB at six scales (1:1 to 1:32, each halved in linear light), SSIM and two edge maps (ringing, blurring) per
/// channel, their 1- and 4-norms weighted, then a cubic and a power. Here in single precision and streamed row by row
/// (`MetricScale`, its row loops in C: `CMetric`): on the benchmark corpus's 598 outputs the package scores below 90,
/// the median difference is 0.005 and the largest 0.29; above 93 single precision reads up to 0.7 lower
/// (`Benchmarks/quality-results.md`; `SSIMULACRA2Tests` runs the package itself). A 2048 px photo is scored in about
/// 4 MB.
public enum SSIMULACRA2 {
    /// 1:1 to 1:32.
    static let scales = 6

    /// The score of `distorted` against `reference`, both the same size (grey images count as R = G = B).
    /// Images smaller than 8 px on a side have no scale to compare at: they score 100.
    public static func score(_ reference: PixelImage, _ distorted: PixelImage) -> Double {
        score(reference, distorted, kept: [], taking: false)
    }

    /// The reference's rows of every scale (one `MetricReferenceRows` per `MetricScale.sizes`) kept into `kept` as they pass, or (`taking`)
    /// taken from it without reading the reference's pixels.
    static func score(_ reference: PixelImage, _ distorted: PixelImage, kept: [MetricReferenceRows], taking: Bool) -> Double {
        precondition(reference.width == distorted.width && reference.height == distorted.height, "SSIMULACRA2 compares images of one size")
        let width = reference.width, height = reference.height
        guard width >= 8, height >= 8 else { return 100 }
        let top = MetricScale(width: width, height: height, scalesLeft: SSIMULACRA2.scales, kept: kept[...], taking: taking)
        let first = UnsafeMutablePointer<Float>.allocate(capacity: 3 * width)
        let second = UnsafeMutablePointer<Float>.allocate(capacity: 3 * width)
        defer {
            first.deallocate()
            second.deallocate()
        }
        XYB.linear.withUnsafeBufferPointer { linear in
            for y in 0..<height {
                if !taking { linearRow(reference, y, linear, into: first) }
                linearRow(distorted, y, linear, into: second)
                top.push(first, second)
            }
        }
        top.finish()
        return score(sums: top.allSums, pixels: top.pixelsPerScale)
    }

    /// Row `y` of `image` as interleaved linear RGB.
    private static func linearRow(_ image: PixelImage, _ y: Int, _ linear: UnsafeBufferPointer<Float>, into out: UnsafeMutablePointer<Float>) {
        image.pixels.withUnsafeBufferPointer { pixels in
            let width = image.width
            if image.channels == 3 {
                let row = pixels.baseAddress! + 3 * width * y
                for i in 0..<(3 * width) { out[i] = linear[Int(row[i])] }
            } else {
                let row = pixels.baseAddress! + width * y
                for x in 0..<width {
                    let v = linear[Int(row[x])]
                    out[3 * x] = v; out[3 * x + 1] = v; out[3 * x + 2] = v
                }
            }
        }
    }

    /// The weighted sum of the 1- and 4-norms, per channel, scale and map, turned into the 0–100 score.
    static func score(sums: [[Double]], pixels: [Int]) -> Double {
        var total = 0.0
        var i = 0
        for c in 0..<3 {
            for (scale, s) in sums.enumerated() {
                let n = Double(pixels[scale])
                let ssim = (s[c * 6] / n, pow(s[c * 6 + 1] / n, 0.25))
                let artefact = (s[c * 6 + 2] / n, pow(s[c * 6 + 3] / n, 0.25))
                let detail = (s[c * 6 + 4] / n, pow(s[c * 6 + 5] / n, 0.25))
                total += weights[i] * ssim.0 + weights[i + 1] * artefact.0 + weights[i + 2] * detail.0
                total += weights[i + 3] * ssim.1 + weights[i + 4] * artefact.1 + weights[i + 5] * detail.1
                i += 6
            }
        }
        total *= 0.9562382616834844
        total = 2.326765642916932 * total - 0.020884521182843837 * total * total + 6.248496625763138e-05 * total * total * total
        return total > 0 ? 100 - 10 * pow(total, 0.6276336467831387) : 100
    }

    /// SSIMULACRA 2.1's 108 weights: per channel (X, Y, B), per scale, per norm (1, 4): SSIM, artefact, detail loss.
    static let weights: [Double] = [
        0.0, 0.0007376606707406586, 0.0, 0.0, 0.0007793481682867309, 0.0, 0.0, 0.0004371155730107379, 0.0,
        1.1041726426657346, 0.00066284834129271, 0.00015231632783718752, 0.0, 0.0016406437456599754, 0.0,
        1.8422455520539298, 11.441172603757666, 0.0, 0.0007989109436015163, 0.000176816438078653, 0.0,
        1.8787594979546387, 10.94906990605142, 0.0, 0.0007289346991508072, 0.9677937080626833, 0.0,
        0.00014003424285435884, 0.9981766977854967, 0.00031949755934435053, 0.0004550992113792063, 0.0, 0.0,
        0.0013648766163243398, 0.0, 0.0, 0.0, 0.0, 0.0, 7.466890328078848, 0.0, 17.445833984131262,
        0.0006235601634041466, 0.0, 0.0, 6.683678146179332, 0.00037724407979611296, 1.027889937768264,
        225.20515300849274, 0.0, 0.0, 19.213238186143016, 0.0011401524586618361, 0.001237755635509985,
        176.39317598450694, 0.0, 0.0, 24.43300999870476, 0.28520802612117757, 0.0004485436923833408, 0.0, 0.0, 0.0,
        34.77906344483772, 44.835625328877896, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0008680556573291698, 0.0,
        0.0, 0.0, 0.0, 0.0, 0.0005313191874358747, 0.0, 0.00016533814161379112, 0.0, 0.0, 0.0, 0.0, 0.0,
        0.0004179171803251336, 0.0017290828234722833, 0.0, 0.0020827005846636437, 0.0, 0.0, 8.826982764996862,
        23.19243343998926, 0.0, 95.1080498811086, 0.9863978034400682, 0.9834382792465353, 0.0012286405048278493,
        171.2667255897307, 0.9807858872435379, 0.0, 0.0, 0.0, 0.0005130064588990679, 0.0, 0.00010854057858411537,
    ]
}
