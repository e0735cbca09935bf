/// What shrink-on-load costs: a photo decoded at the DCT scale each margin allows and resized, scored with SSIMULACRA2
/// against the same photo decoded whole and resized with Lanczos3 — the reference the benchmarks judge by — with the
/// time of the decode and resize. `photoprep bench --fidelity` prints it; `shrinkOnLoadMargin`'s default comes from it.
@_spi(Benchmarks)
public enum ResizeFidelity {
    public struct Row: Sendable {
        public var margin: Double
        public var scale: Int
        public var score: Double
        public var seconds: Double
    }

    public static func measure(_ bytes: [UInt8], options: PrepareOptions, margins: [Double]) throws(PhotoPrepError) -> [Row] {
        let info = try SourceInfo.read(bytes, maxPixels: options.maxPixels)
        let target = options.outputSize(width: info.width, height: info.height)
        var whole = options
        whole.shrinkOnLoadMargin = .infinity
        let full = try Decoder.decode(bytes, info: info, target: target, options: whole).image
        let reference = Resizer.resize(full, width: target.width, height: target.height)
        let clock = ContinuousClock()
        var rows: [Row] = []
        for margin in margins {
            var shrinking = options
            shrinking.shrinkOnLoadMargin = margin
            let plan = DecodePlan(info: info, fileBytes: bytes.count, target: target, options: shrinking)
            let start = clock.now
            var image = try Decoder.decode(bytes, info: info, plan: plan, options: shrinking).image
            if image.width != target.width || image.height != target.height {
                image = Resizer.resize(image, width: target.width, height: target.height)
            }
            let elapsed = seconds(clock.now - start)
            rows.append(Row(margin: margin, scale: plan.scale, score: SSIMULACRA2.score(reference, image), seconds: elapsed))
        }
        return rows
    }
}
