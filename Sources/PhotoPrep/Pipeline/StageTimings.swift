/// Microbenchmarks of the pipeline's stages on one photo, so that a regression shows where it is:
/// decode at each TurboJPEG scale, the resize, one encode, and the budget search.
@_spi(Benchmarks)
public enum StageTimings {
    /// Median seconds of `runs` runs of each stage, in order.
    public static func measure(_ bytes: [UInt8], options: PrepareOptions, runs: Int) throws(PhotoPrepError) -> [(stage: String, seconds: Double)] {
        let info = try SourceInfo.read(bytes, maxPixels: options.maxPixels)
        let target = options.outputSize(width: info.width, height: info.height)
        let clock = ContinuousClock()
        func time(_ body: () throws(PhotoPrepError) -> Void) throws(PhotoPrepError) -> Double {
            var samples: [Double] = []
            for _ in 0..<max(1, runs) {
                let start = clock.now
                try body()
                samples.append(seconds(clock.now - start))
            }
            return samples.sorted()[samples.count / 2]
        }
        var results: [(String, Double)] = []
        var full: PixelImage?
        if info.format == .jpeg {
            for scale in [1, 2, 4, 8] {
                results.append(("decode 1/\(scale)", try time { () throws(PhotoPrepError) in
                    let image = try Decoder.decodeJPEG(bytes, info: info, scale: scale, strict: false).image
                    if scale == 1 { full = image }
                }))
            }
        } else {
            results.append(("decode \(info.format.rawValue)", try time { () throws(PhotoPrepError) in
                full = try Decoder.decode(bytes, info: info, target: target, options: options).image
            }))
        }
        let source = full!
        results.append(("resize \(source.width)×\(source.height) → \(target.width)×\(target.height)", try time {
            _ = Resizer.resize(source, width: target.width, height: target.height)
        }))
        let resized = Resizer.resize(source, width: target.width, height: target.height)
        results.append(("one encode Q85", try time { () throws(PhotoPrepError) in
            _ = try JPEGWriter.encode(resized, quality: 85, settings: .init()) { $0.count }
        }))
        let jpeg = try JPEGWriter.encode(resized, quality: 85, settings: .init()) { Array($0) }
        let decompressor = try TurboJPEGDecompressor()
        results.append(("one decode + SSIMULACRA2", try time { () throws(PhotoPrepError) in
            _ = try BudgetEncoder.score(jpeg, of: resized, decompressor)
        }))
        results.append(("encode for \(options.quality) (< \(options.maxBytes) B)", try time { () throws(PhotoPrepError) in
            _ = try BudgetEncoder(options: options, extraSegments: []).encode(resized)
        }))
        return results
    }
}
