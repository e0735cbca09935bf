internal import CTurboJPEG

/// Encodes an image as JPEG strictly under a byte budget, at the quality `PrepareOptions.quality` asks for:
/// the lowest quality whose SSIMULACRA2 score reaches the target (`TargetSearch`, each candidate decoded and scored
/// against the pixels it encodes), a fixed quality, or the highest that fits (`QualitySearch`) — which is also what a
/// photo gets whose target needs more bytes than the budget. When even the lowest quality misses the budget, the
/// dimensions shrink and the search runs again.
///
/// Every encode has optimised Huffman tables. Colour photos are searched at 4:2:0 for targets below 88, at 4:4:4 from
/// there on; a photo that 4:2:0 cannot bring to its target is searched again at 4:4:4. The chosen quality is written
/// progressive as well, and the smaller file kept (the same coefficients: the same pixels, the same score).
struct BudgetEncoder {
    struct Result {
        /// The verified encode (ICC segments, if any, already inserted).
        var jpeg: [UInt8]
        var width: Int
        var height: Int
        var quality: Int
        /// SSIMULACRA2 of the decoded JPEG against the pixels encoded (nil when filling the budget, `QualityTarget.max`:
        /// that path measures nothing, as fast as before there was a target).
        var score: Double?
        var settings: JPEGWriter.Settings
        var encodes: Int
        /// The score target was not reached: the budget binds, or the top quality scores below it.
        var missedTarget: Bool
        /// What scoring kept of the pixels encoded: another codec's candidates of the same pixels are scored against it
        /// without computing it again (a thumbnail's WebP).
        var reference: ScoringReference
    }

    let options: PrepareOptions
    /// APP2 segments to insert after JFIF (empty when no profile is kept); they count against the budget.
    let extraSegments: [UInt8]

    /// A candidate encode: its bytes (without the extra segments) and its score, when scored.
    private struct Candidate {
        var quality: Int
        var settings: JPEGWriter.Settings
        var jpeg: [UInt8]
        var score: Double?
    }

    func encode(_ image: PixelImage) throws(PhotoPrepError) -> Result {
        let limit = options.maxBytes - extraSegments.count
        var image = image
        var encodes = 0
        let decompressor = try TurboJPEGDecompressor()
        while true {
            var settings = JPEGWriter.Settings()
            var reference = ScoringReference(image)  // each candidate is scored against the same pixels
            func encode(_ quality: Int) throws(PhotoPrepError) -> Candidate {
                encodes += 1
                return Candidate(
                    quality: quality, settings: settings, jpeg: try JPEGWriter.encode(image, quality: quality, settings: settings) { Array($0) })
            }
            func score(_ candidate: inout Candidate) throws(PhotoPrepError) -> Double {
                if let score = candidate.score { return score }
                let score = reference.score(try Self.decoded(candidate.jpeg, like: image, decompressor))
                candidate.score = score
                return score
            }

            var chosen: Candidate?
            var missed = false
            switch options.quality {
            case .score(let target):
                // High targets start at 4:4:4: from SSIMULACRA2 90 on, it is the smaller file on most photos (13 of 21 of the
                // calibration corpus at 90, 4–6 of 21 at 85, where 4:2:0 stays first).
                if target >= Self.fullChromaFromScore && image.channels == 3 { settings.fullChroma = true }
                var outcome = try searchTarget(target, limit: limit, encode: encode, score: score)
                if case .unreachable(let subsampled) = outcome, image.channels == 3, !settings.fullChroma {
                    // 4:2:0 caps the score: full-resolution chroma, kept when it reaches the target or scores higher.
                    settings.fullChroma = true
                    let full = try searchTarget(target, limit: limit, encode: encode, score: score)
                    switch full {
                    case .found: outcome = full
                    case .unreachable(let top) where (top.score ?? 0) > (subsampled.score ?? 0): outcome = full
                    default: break
                    }
                }
                switch outcome {
                case .found(let candidate): chosen = candidate
                case .unreachable(let best): chosen = best
                case .budgetBound(let below):
                    chosen = try fillBudget(limit: limit, qualities: options.qualities.lowerBound...below, pixels: image.width * image.height, encode: encode)
                }
                if var found = chosen { missed = try score(&found) < target; chosen = found }
            case .fixed(let quality):
                let first = try encode(min(max(quality, options.qualities.lowerBound), options.qualities.upperBound))
                chosen = first.jpeg.count < limit
                    ? first : try fillBudget(limit: limit, qualities: options.qualities.lowerBound...first.quality, pixels: image.width * image.height, encode: encode)
            case .max:
                chosen = try fillBudget(limit: limit, qualities: options.qualities, pixels: image.width * image.height, encode: encode)
            }

            if var chosen {
                let finalScore = options.quality == .max ? nil : try score(&chosen)
                try progressiveIfSmaller(&chosen, image: image)
                return Result(
                    jpeg: chosen.jpeg.withUnsafeBytes { JPEGSegments.inserting(extraSegments, into: $0) }, width: image.width, height: image.height,
                    quality: chosen.quality, score: finalScore, settings: chosen.settings, encodes: encodes, missedTarget: missed,
                    reference: reference)
            }
            // Even the lowest quality missed: shrink the area in proportion to the overshoot.
            let smallest = try encode(options.qualities.lowerBound).jpeg.count
            let factor = (Double(limit) / Double(smallest)).squareRoot() * 0.95
            let width = Int(Double(image.width) * factor), height = Int(Double(image.height) * factor)
            guard max(width, height) >= options.minimumEdge, min(width, height) >= 1, limit > 0 else {
                throw PhotoPrepError(
                    .encode, .budgetUnreachable,
                    "even \(image.width) × \(image.height) at quality \(options.qualities.lowerBound) takes \(smallest + extraSegments.count) bytes, "
                        + "over the budget of \(options.maxBytes) bytes, and the long edge may not go below \(options.minimumEdge) px")
            }
            image = Resizer.resize(image, width: width, height: height)
        }
    }

    private enum Outcome {
        case found(Candidate)
        /// The best the top quality does (nil score: the lowest quality already misses the budget).
        case unreachable(Candidate)
        /// Qualities above this are over the budget (below the lowest allowed: nothing fits).
        case budgetBound(below: Int)
    }

    /// Runs `TargetSearch` to its end.
    private func searchTarget(
        _ target: Double, limit: Int, encode: (Int) throws(PhotoPrepError) -> Candidate,
        score: (inout Candidate) throws(PhotoPrepError) -> Double
    ) throws(PhotoPrepError) -> Outcome {
        var search = TargetSearch(target: target, qualities: options.qualities, limit: limit)
        var best: Candidate?  // the lowest pass so far
        var top: Candidate?  // the highest quality tried under the budget
        var lowestOver = options.qualities.upperBound + 1
        while true {
            switch search.next() {
            case .encode(let quality):
                var candidate = try encode(quality)
                guard candidate.jpeg.count < limit else {
                    lowestOver = min(lowestOver, quality)
                    search.record(quality: quality, size: candidate.jpeg.count, score: nil)
                    continue
                }
                let value = try score(&candidate)
                search.record(quality: quality, size: candidate.jpeg.count, score: value)
                if value >= target, quality < (best?.quality ?? .max) { best = candidate }
                if quality > (top?.quality ?? .min) { top = candidate }
            case .done:
                return .found(best!)
            case .targetUnreachable:
                if let top, top.quality == options.qualities.upperBound { return .unreachable(top) }
                return .unreachable(try encode(options.qualities.upperBound))
            case .budgetBound:
                return .budgetBound(below: lowestOver - 1)
            }
        }
    }

    /// The highest quality in `qualities` under the budget (`QualitySearch`); nil when even the lowest misses.
    private func fillBudget(
        limit: Int, qualities: ClosedRange<Int>, pixels: Int, encode: (Int) throws(PhotoPrepError) -> Candidate
    ) throws(PhotoPrepError) -> Candidate? {
        guard qualities.upperBound >= qualities.lowerBound else { return nil }
        var search = QualitySearch(qualities: qualities, limit: limit, tolerance: options.budgetTolerance, pixels: pixels)
        var kept: Candidate?
        while true {
            switch search.next() {
            case .encode(let quality):
                let candidate = try encode(quality)
                if candidate.jpeg.count < limit && quality > (kept?.quality ?? 0) { kept = candidate }
                search.record(quality: quality, size: candidate.jpeg.count)
            case .done:
                return kept
            case .unreachable:
                return nil
            }
        }
    }

    /// Writes `chosen` progressive too, and keeps that when it is smaller (progressive scans pay on all but small images).
    private func progressiveIfSmaller(_ chosen: inout Candidate, image: PixelImage) throws(PhotoPrepError) {
        guard options.progressive, image.width * image.height >= Self.progressiveFromPixels else { return }
        var progressive = chosen.settings
        progressive.progressive = true
        let jpeg = try JPEGWriter.encode(image, quality: chosen.quality, settings: progressive) { Array($0) }
        guard jpeg.count < chosen.jpeg.count else { return }
        chosen.jpeg = jpeg
        chosen.settings = progressive
    }

    /// Score targets from which the search starts at 4:4:4 (`Benchmarks/calibration.sh`).
    static let fullChromaFromScore = 88.0

    /// Images smaller than this are left baseline: progressive scans rarely pay there (`Benchmarks/calibration.sh`).
    static let progressiveFromPixels = 100_000

    /// SSIMULACRA2 of `jpeg` decoded against `image`.
    static func score(_ jpeg: [UInt8], of image: PixelImage, _ decompressor: TurboJPEGDecompressor) throws(PhotoPrepError) -> Double {
        SSIMULACRA2.score(image, try decoded(jpeg, like: image, decompressor))
    }

    /// `jpeg`, an encode of `image`, decoded to pixels of its size and channels.
    static func decoded(_ jpeg: [UInt8], like image: PixelImage, _ decompressor: TurboJPEGDecompressor) throws(PhotoPrepError) -> PixelImage {
        let decoded = try decompressor.decode(
            jpeg, width: image.width, height: image.height, denominator: 1, pixelFormat: image.channels == 1 ? TJPF_GRAY : TJPF_RGB,
            strict: true)
        return PixelImage(width: image.width, height: image.height, channels: image.channels, pixels: decoded.pixels)
    }
}
