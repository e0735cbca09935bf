/// One reference image scored against several times — a quality search's candidates: the first score keeps the
/// reference's side of every scale (`MetricReferenceRows`: 36 bytes a pixel, a third more for the scales below), and
/// later scores take it instead of computing the reference's XYB and four of the ten blurs again. The scores are
/// `SSIMULACRA2.score`'s, bit for bit (`SSIMULACRA2Tests`). Images over `maximumPixels` keep nothing and stream as
/// `SSIMULACRA2.score` does: a photo's own search, at 1024 or 2048 px, stays within a few megabytes.
struct ScoringReference {
    /// 512 × 781: 19 MB kept at most — thumbnails and small photos; a photo's own search at 1024 or 2048 px streams.
    static let maximumPixels = 400_000

    /// The bytes a reference of `width` × `height` keeps (`MemoryEstimate` counts them): 36 a pixel at each scale.
    static func keptBytes(width: Int, height: Int) -> Int {
        guard width * height <= maximumPixels, width >= 8, height >= 8 else { return 0 }
        return MetricScale.sizes(width: width, height: height, scalesLeft: SSIMULACRA2.scales).reduce(0) { $0 + 36 * $1.width * $1.height }
    }

    let image: PixelImage
    private var kept: [MetricReferenceRows] = []

    init(_ image: PixelImage) {
        self.image = image
    }

    /// The score of `distorted`, the same size as the reference.
    mutating func score(_ distorted: PixelImage) -> Double {
        guard Self.keptBytes(width: image.width, height: image.height) > 0 else {
            return SSIMULACRA2.score(image, distorted)
        }
        guard kept.isEmpty else { return SSIMULACRA2.score(image, distorted, kept: kept, taking: true) }
        kept = MetricScale.sizes(width: image.width, height: image.height, scalesLeft: SSIMULACRA2.scales).map { MetricReferenceRows(width: $0.width, height: $0.height) }
        return SSIMULACRA2.score(image, distorted, kept: kept, taking: false)
    }
}
