/// Small copies of the normalised photo for lists and avatars, made from its pixels — upright, already
/// resized — so a photo is decoded once for itself and its thumbnails; with `PrepareOptions.squareThumbnails`, squares
/// cut from it (`SquareCrop`), each side at most the photo's short side (never enlarged). Each long edge in
/// `PrepareOptions.thumbnails` (never larger than the photo), the largest first and each smaller one from
/// the one before (`Resizer.thumbnail` from a larger copy, not from the original: a fraction of the work), encoded to
/// the photo's quality target (`BudgetEncoder`, without a byte budget) with the photo's colour profile — and, with
/// `PrepareOptions.webpThumbnails`, as WebP too when a WebP is the same picture in fewer bytes (`WebPEncoder`).
enum Thumbnails {
    /// The quality of thumbnails when the photo fills its budget (`QualityTarget.max`): they have no budget of their own.
    static let fillingQuality = 82

    /// `extraSegments`: the colour profile's JPEG segments, from `iccProfile` (nil when none is kept).
    /// The square the thumbnails were cut from is reported (`PrepareReport.squareCrop`).
    static func make(
        from image: PixelImage, options: PrepareOptions, extraSegments: [UInt8], iccProfile: [UInt8]?, report: inout PrepareReport
    ) throws(PhotoPrepError) -> [Thumbnail] {
        guard !options.thumbnails.isEmpty else { return [] }
        let clock = ContinuousClock(), started = clock.now
        var webpTime = Duration.zero
        var unbounded = options
        unbounded.maxBytes = .max
        if options.quality == .max { unbounded.quality = .fixed(Self.fillingQuality) }  // no budget to fill
        let encoder = BudgetEncoder(options: unbounded, extraSegments: extraSegments)
        var made: [Thumbnail] = []
        var source = image
        if options.squareThumbnails {
            // Squares: cut once, then each side from the one before, as the long-edge fits are.
            let cropStarted = clock.now
            defer { report.timings.squareCrop = seconds(clock.now - cropStarted) }
            let square = SquareCrop(width: image.width, height: image.height, focus: options.focus, image: image)
            let centre = square.centre(width: image.width, height: image.height)
            report.squareCrop = .init(x: PrepareReport.rounded(centre.x), y: PrepareReport.rounded(centre.y), rule: square.rule)
            source = square.cut(image)
        }
        for edge in Set(options.thumbnails).sorted(by: >) {
            let size = PrepareOptions(maxEdge: edge, maxBytes: .max).outputSize(width: source.width, height: source.height)
            let pixels = size == (source.width, source.height) ? source : Resizer.thumbnail(source, width: size.width, height: size.height)
            let encoded = try encoder.encode(pixels)
            var thumbnail = Thumbnail(edge: edge, width: pixels.width, height: pixels.height, jpeg: encoded.jpeg, score: encoded.score)
            if options.webpThumbnails, let score = encoded.score {
                let webpStarted = clock.now
                if let webp = try WebPEncoder(target: score, jpegBytes: encoded.jpeg.count, jpegQuality: encoded.quality, iccProfile: iccProfile).encode(pixels, scoring: encoded.reference) {
                    (thumbnail.webp, thumbnail.webpQuality, thumbnail.webpScore) = (webp.webp, webp.quality, webp.score)
                }
                webpTime += clock.now - webpStarted
            }
            made.append(thumbnail)
            source = pixels
        }
        made.reverse()
        report.thumbnails = made.map(\.summary)
        report.timings.thumbnails = seconds(clock.now - started)
        report.timings.webp = seconds(webpTime)
        return made
    }
}
