/// A photo's score and bytes at each JPEG quality, for both chroma layouts, baseline and progressive: what
/// `TargetSearch`'s first guess and slope, the 4:4:4 rule and the progressive threshold are calibrated on
/// (`photoprep bench --curve`, `Benchmarks/calibration.sh`).
@_spi(Benchmarks)
public enum QualityCurve {
    public struct Point: Sendable, Codable {
        public var quality: Int
        public var fullChroma: Bool
        public var baselineBytes: Int
        public var progressiveBytes: Int
        public var score: Double
    }

    /// The photo in `bytes` decoded and resized as `prepare` does it, then encoded at each of `qualities`.
    public static func measure(_ bytes: [UInt8], options: PrepareOptions, qualities: [Int]) throws(PhotoPrepError) -> (width: Int, height: Int, points: [Point]) {
        let info = try SourceInfo.read(bytes, maxPixels: options.maxPixels)
        let target = options.outputSize(width: info.width, height: info.height)
        var image = try Decoder.decode(bytes, info: info, target: target, options: options).image
        if image.width != target.width || image.height != target.height {
            image = Resizer.resize(image, width: target.width, height: target.height)
        }
        image = info.orientation.apply(to: image)
        let decompressor = try TurboJPEGDecompressor()
        var points: [Point] = []
        for fullChroma in image.channels == 3 ? [false, true] : [false] {
            for quality in qualities {
                let baseline = try JPEGWriter.encode(image, quality: quality, settings: .init(fullChroma: fullChroma)) { Array($0) }
                let progressive = try JPEGWriter.encode(image, quality: quality, settings: .init(fullChroma: fullChroma, progressive: true)) { $0.count }
                points.append(Point(
                    quality: quality, fullChroma: fullChroma, baselineBytes: baseline.count, progressiveBytes: progressive,
                    score: try BudgetEncoder.score(baseline, of: image, decompressor)))
            }
        }
        return (image.width, image.height, points)
    }
}
