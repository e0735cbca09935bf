/// A thumbnail's WebP, beside its JPEG and from the same pixels, when it is the same picture in fewer bytes: the lowest
/// WebP quality whose SSIMULACRA2 score reaches the JPEG's own (`TargetSearch`, at most five encodes, each decoded and
/// scored), kept only when it is smaller than the JPEG. Never a worse picture for fewer bytes: lossy WebP is 4:2:0 only,
/// and at avatar sizes a JPEG encoded for a high score keeps full-resolution chroma that no WebP quality matches —
/// then there is no WebP, and readers get the JPEG.
struct WebPEncoder {
    /// The score to reach: the JPEG thumbnail's.
    let target: Double
    /// The JPEG thumbnail's size: a WebP must be smaller.
    let jpegBytes: Int
    /// The colour profile of the pixels (the one the JPEG keeps), put in the WebP's container (nil: sRGB).
    let iccProfile: [UInt8]?

    struct Result {
        var webp: [UInt8]
        var quality: Int
        var score: Double
    }

    /// Where the search starts: the median quality at which the calibration corpus's thumbnails (`Benchmarks/calibration-corpus.sh`,
    /// not the benchmark's) reached their JPEG's SSIMULACRA2 85-odd — 90 for 512 px fits and 256 px squares (93 for the
    /// four 128 px squares of 21 that had one). From the JPEG table's guess (87) instead, the WebP step of a 512 px
    /// thumbnail took 81.7 ms rather than 68.5 on the benchmark corpus (`Benchmarks/thumbnails.sh`; that run shared
    /// the machine with a build).
    static let typicalQuality = 90

    /// The WebP, or nil when none reaches the JPEG's score in fewer bytes.
    func encode(_ image: PixelImage) throws(PhotoPrepError) -> Result? {
        let reference = image.rgbImage  // grey made RGB once: what each candidate encodes and is scored against
        var tried: [Int: Result] = [:]
        func candidate(_ quality: Int) throws(PhotoPrepError) -> Result {
            if let known = tried[quality] { return known }
            let webp = try LibWebPEncoder.encode(reference, quality: quality)
            guard let decoded = LibWebPEncoder.decodeRGB(webp, width: image.width, height: image.height) else {
                throw PhotoPrepError(.encode, .codecFailure, "libwebp: its own WebP does not decode")
            }
            let result = Result(webp: webp, quality: quality, score: SSIMULACRA2.score(reference, decoded))
            tried[quality] = result
            return result
        }
        // Over the JPEG's size counts as over the budget: the search stops there, as it does for a JPEG's byte budget.
        var search = TargetSearch(target: target, qualities: 50...100, limit: jpegBytes)
        search.maxEncodes = 5
        search.firstQuality = Self.typicalQuality
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
