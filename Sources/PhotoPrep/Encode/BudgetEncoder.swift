/// Encodes an image as JPEG strictly under a byte budget, choosing the quality with `QualitySearch`
/// and, when even the lowest quality misses, shrinking the dimensions and searching again.
struct BudgetEncoder {
    struct Result {
        /// The verified encode (ICC segments, if any, already inserted).
        var jpeg: [UInt8]
        var width: Int
        var height: Int
        var quality: Int
        var encodes: Int
    }

    let options: PrepareOptions
    /// APP2 segments to insert after JFIF (empty when no profile is kept); they count against the budget.
    let extraSegments: [UInt8]

    func encode(_ image: PixelImage) throws(PhotoPrepError) -> Result {
        let compressor = try TurboJPEGCompressor()
        let limit = options.maxBytes - extraSegments.count
        var image = image
        var encodes = 0
        while true {
            var search = QualitySearch(
                qualities: options.qualities, limit: limit, tolerance: options.budgetTolerance,
                pixels: image.width * image.height)
            var kept: [UInt8]?
            search: while true {
                switch search.next() {
                case .encode(let quality):
                    let size = try compressor.encode(image, quality: quality) { jpeg in
                        if jpeg.count < limit && quality > (search.fit?.quality ?? 0) {
                            kept = JPEGSegments.inserting(extraSegments, into: jpeg)
                        }
                        return jpeg.count
                    }
                    encodes += 1
                    search.record(quality: quality, size: size)
                case .done(let quality):
                    return Result(jpeg: kept!, width: image.width, height: image.height, quality: quality, encodes: encodes)
                case .unreachable:
                    break search
                }
            }
            // Even the lowest quality missed: shrink the area in proportion to the overshoot.
            let smallest = search.miss!
            let factor = (Double(limit) / Double(smallest.size)).squareRoot() * 0.95
            let width = Int(Double(image.width) * factor), height = Int(Double(image.height) * factor)
            guard max(width, height) >= options.minimumEdge, min(width, height) >= 1, limit > 0 else {
                throw PhotoPrepError(
                    .encode, .budgetUnreachable,
                    "even \(image.width) × \(image.height) at quality \(smallest.quality) takes \(smallest.size + extraSegments.count) bytes, "
                        + "over the budget of \(options.maxBytes) bytes, and the long edge may not go below \(options.minimumEdge) px")
            }
            image = Resizer.resize(image, width: width, height: height)
        }
    }
}
