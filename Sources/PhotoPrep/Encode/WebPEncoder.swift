#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A thumbnail's WebP, beside its JPEG and from the same pixels, when it is the same picture in fewer bytes: the lowest
/// WebP quality whose SSIMULACRA2 score reaches the JPEG's own (`TargetSearch`, at most three encodes of one YUV picture,
/// each decoded and scored against one kept reference), kept only when it is smaller than the JPEG. Never a worse picture for fewer bytes: lossy WebP is 4:2:0 only,
/// and at avatar sizes a JPEG encoded for a high score keeps full-resolution chroma that no WebP quality matches —
/// then there is no WebP, and readers get the JPEG.
struct WebPEncoder {
    /// The score to reach: the JPEG thumbnail's.
    let target: Double
    /// The JPEG thumbnail's size: a WebP must be smaller.
    let jpegBytes: Int
    /// The JPEG thumbnail's quality: with its size, it predicts the WebP's.
    let jpegQuality: Int
    /// The colour profile of the pixels (the one the JPEG keeps), put in the WebP's container (nil: sRGB).
    let iccProfile: [UInt8]?

    struct Result {
        var webp: [UInt8]
        var quality: Int
        var score: Double
    }

    /// Where the search starts: the quality the JPEG's own quality and bits per pixel predict. On the calibration corpus
    /// (`Benchmarks/calibration-corpus.sh`, not the benchmark's: 21 photos, the 47 thumbnails — 512 px fits, 256 and
    /// 128 px squares — that a WebP can match), the quality a WebP needed to reach its JPEG's SSIMULACRA2 rose with the
    /// JPEG's quality and fell with its bits per pixel: 58.4 + 0.379 · Q − 3.57 · ln(bpp) by least squares (Q 90 at
    /// 1 bpp: 92.5; at 3 bpp: 88.5), 1.0 qualities off in the median, against 1.6 for bits per pixel alone and 2.0 for
    /// the median quality (90) alone. Smooth pictures cost JPEG few bits, and WebP's smoothing shows on them.
    static func firstQuality(jpegQuality: Int, jpegBytes: Int, pixels: Int) -> Int {
        let bitsPerPixel = max(Double(8 * jpegBytes) / Double(max(1, pixels)), 0.01)
        return Int((58.4 + 0.379 * Double(jpegQuality) - 3.57 * log(bitsPerPixel)).rounded())
    }
    /// Score points a WebP quality step adds, until two scores are known: 0.7, the median of the same thumbnails between
    /// qualities 86 and 96 (0.72 at 512 px, 0.66 with the squares; the JPEG's is 0.6).
    static let typicalSlope = 0.7

    /// The WebP, or nil when none reaches the JPEG's score in fewer bytes. `scoring`: the JPEG search's reference, with
    /// what it kept, used when it holds the same pixels (a grey image's does not: WebP's candidates are RGB).
    func encode(_ image: PixelImage, scoring: ScoringReference) throws(PhotoPrepError) -> Result? {
        let reference = image.rgbImage  // grey made RGB once: what each candidate encodes and is scored against
        let picture = try LibWebPEncoder.Picture(reference)  // and made YUV once
        var scoring = scoring.image.pixels == reference.pixels ? scoring : ScoringReference(reference)
        var tried: [Int: Result] = [:]
        func candidate(_ quality: Int) throws(PhotoPrepError) -> Result {
            if let known = tried[quality] { return known }
            let webp = try picture.encode(quality: quality)
            guard let decoded = LibWebPEncoder.decodeRGB(webp, width: image.width, height: image.height) else {
                throw PhotoPrepError(.encode, .codecFailure, "libwebp: its own WebP does not decode")
            }
            let result = Result(webp: webp, quality: quality, score: scoring.score(decoded))
            tried[quality] = result
            return result
        }
        // The JPEG's size is the budget: the search gives up as soon as it predicts no WebP reaching the score fits under
        // it (`predictsSize`: each encode here is scored, those over it too).
        var search = TargetSearch(target: target, qualities: 50...100, limit: jpegBytes)
        search.maxEncodes = 3  // five made no thumbnail of the calibration corpus smaller at 512 px, 0.05 % of the squares' bytes
        search.firstQuality = Self.firstQuality(jpegQuality: jpegQuality, jpegBytes: jpegBytes, pixels: image.width * image.height)
        search.priorSlope = Self.typicalSlope
        search.predictsSize = true
        while true {
            switch search.next() {
            case .encode(let quality):
                let result = try candidate(quality)
                search.record(quality: quality, size: result.webp.count, score: result.score)
            case .done(let quality):
                var chosen = try candidate(quality)
                if let iccProfile { chosen.webp = try LibWebPEncoder.withProfile(chosen.webp, iccProfile) }
                return chosen.webp.count < jpegBytes ? chosen : nil
            case .budgetBound, .targetUnreachable:
                return nil
            }
        }
    }
}
