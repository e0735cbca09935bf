/// The most memory one photo's decode, resize and encode hold at once, estimated from its header
/// before any pixel is allocated, so that a photo over the budget (`PrepareOptions.maxMemory`) is
/// refused with a reason instead of exhausting the machine. What dominates:
///
/// | source | held whole |
/// |---|---|
/// | progressive (or multi-scan) JPEG | every DCT coefficient: 2 bytes × 64 per 8 × 8 block of each component (a 16383² 4:4:4 file: 1.5 GiB) |
/// | baseline JPEG | the decoded image at the shrink-on-load scale (libjpeg keeps only a few rows of its own) |
/// | PNG | the decoded image at full size (libpng's simplified API has no scaled decode) — or, when that is |
/// | | over the budget and the PNG is not interlaced, one row and the image shrunk while streaming (`DecodePlan`) |
/// | HEIF, AVIF | the whole image twice: libheif's decoded YCbCr planes and its RGB(A) conversion (HEVC and AV1 have |
/// | | no scaled decode), 2 bytes a sample above 8 bits, and our 8-bit copy |
/// | WebP | the image as decoded at the shrink-on-load scale (libwebp scales while decoding), RGBA when it has |
/// | | alpha; an animation's canvas at full size |
///
/// plus the file itself (unless a JPEG is read from its file row by row). That is the decode; the resize (the
/// decoded image, the resizer's intermediate of output width × decoded height, the result) and the encode (the
/// output image, a turned copy, the encoder's JPEGs up to the byte budget `maxBytes`) come after it, each once
/// the one before has freed what it no longer needs: the largest of the three counts. The estimate errs high by
/// a little (libjpeg's own tables and row buffers are counted generously).
struct MemoryEstimate: Equatable {
    var bytes: Int
    /// What dominates, for the refusal's message.
    var reason: String

    /// `streamed`: a PNG read row by row and shrunk 1/`scale` on the way (`BoxShrinker`), or a JPEG decoded from
    /// its file row by row (`Decoder.decodeJPEG(file:…)`): neither the file nor, when the rows go straight into
    /// the resizer, the decoded image is held.
    /// `kept`: what the score search keeps of its reference at most (`ScoringReference.keptBytes`: a small photo's, a
    /// thumbnail's), held while encoding.
    init(
        info: SourceInfo, fileBytes: Int, scale: Int, target: (width: Int, height: Int), streamed: Bool = false, maxBytes: Int = .max,
        kept: Int = 0
    ) {
        // Past 2⁴⁰ pixels the sums below would overflow (a PNG may declare 2³¹ − 1 each way; `probe` estimates
        // before any pixel limit): no machine holds such a photo, and that is the estimate.
        let coded: (width: Int, height: Int) = info.heif.map { ($0.codedWidth, $0.codedHeight) } ?? (info.width, info.height)
        guard info.width <= (1 << 40) / info.height, coded.width <= (1 << 40) / max(1, coded.height) else {
            bytes = .max
            reason = "a photo of \(info.width) × \(info.height) pixels, more than 2⁴⁰"
            return
        }
        let decoded: (width: Int, height: Int)
        var channels = 3
        var held = 0
        var reason: String
        switch info.format {
        case .jpeg:
            let jpeg = info.jpeg!
            decoded = TurboJPEGDecompressor.scaledSize(width: info.width, height: info.height, denominator: scale)
            if jpeg.components == 1 { channels = 1 }
            if jpeg.components == 4 { channels = 4 + 3 }  // CMYK, then converted to RGB
            let multiScan = jpeg.coding == .progressive || jpeg.scanCount > 1
            if multiScan {
                held = jpeg.blockCount * 64 * 2
                reason = "a \(jpeg.coding == .progressive ? "progressive" : "multi-scan") JPEG of \(info.width) × \(info.height) holds all its coefficients (\(Self.megabytes(held)))"
            } else {
                reason = "the decoded image (\(decoded.width) × \(decoded.height))"
            }
            held += info.width * 16 * jpeg.components * 4  // libjpeg's row groups and upsampling buffers
        case .png:
            if info.png?.isOpaqueGrey == true { channels = 1 }
            held = info.width * 8 * 4  // libpng's rows (16-bit, with alpha)
            if streamed {
                decoded = TurboJPEGDecompressor.scaledSize(width: info.width, height: info.height, denominator: scale)
                held += decoded.width * channels * 4  // the shrinker's row of sums
                reason = "a PNG of \(info.width) × \(info.height) read row by row and shrunk to 1/\(scale)"
            } else {
                decoded = (info.width, info.height)
                // An interlaced PNG with transparency is held whole as decoded: 4 samples a pixel, 16-bit ones 2 bytes each.
                if info.png?.hasAlpha == true, info.png?.interlaced == true {
                    held += info.width * info.height * 4 * (info.png!.bitDepth == 16 ? 2 : 1)
                }
                reason = "a PNG of \(info.width) × \(info.height) is decoded whole (\(Self.megabytes(decoded.width * decoded.height * channels)))"
            }
        case .heif, .avif:
            let heif = info.heif!
            decoded = (info.width, info.height)
            let sample = heif.bitDepth > 8 ? 2 : 1
            // The planes as coded (up to 4:4:4, plus alpha), then the interleaved conversion.
            let planes = heif.codedWidth * heif.codedHeight * (heif.hasAlpha ? 4 : 3) * sample
            held = planes + info.width * info.height * (heif.hasAlpha ? 4 : 3) * sample
            reason = "a \(info.format.rawValue) image of \(info.width) × \(info.height) is decoded whole, with libheif's planes (\(Self.megabytes(held)))"
        case .webp:
            let webp = info.webp!
            decoded = webp.animated ? (info.width, info.height) : TurboJPEGDecompressor.scaledSize(width: info.width, height: info.height, denominator: scale)
            if webp.animated || webp.hasAlpha { held = decoded.width * decoded.height * 4 * (webp.animated ? 2 : 1) }
            // libwebp decodes a lossless image whole, as ARGB, whatever the scale asked for; and a lossy one's alpha
            // (ALPH) to a full-size plane, lossless-coded alpha with a second. (Counted as scaled, a 16383² lossless
            // file estimated at 13 MiB held 1.08 GB.)
            if webp.coding == "lossless" {
                held += info.width * info.height * 4
            } else if webp.hasAlpha {
                held += info.width * info.height * 2
            }
            reason = webp.animated
                ? "an animated WebP's canvas of \(info.width) × \(info.height) is decoded whole"
                : webp.coding == "lossless" ? "a lossless WebP of \(info.width) × \(info.height) is decoded whole, as ARGB"
                : webp.hasAlpha ? "the decoded image (\(decoded.width) × \(decoded.height)) and its alpha at full size (\(info.width) × \(info.height))"
                : "the decoded image (\(decoded.width) × \(decoded.height))"
        }
        // The phases one after another (each frees what the next does not need), the largest counts:
        let image = decoded.width * decoded.height * channels
        let resized = target.width * target.height * 3
        let resizes = decoded.width != target.width || decoded.height != target.height
        // resizing a decoded image: it, the horizontal pass's (output width × decoded height) and the result;
        let resizing = resizes ? image + target.width * decoded.height * 3 + resized : 0
        // encoding: the image, a turned copy when the photo is not upright, the encoder's buffer as far as the budget
        // search writes it, the JPEG it keeps, and the reference the score search keeps (the photo's or a thumbnail's).
        let encoding = resized * (info.orientation == .up ? 1 : 2) + min(resized, 3 * min(maxBytes, resized)) + kept
        if info.format == .jpeg && streamed {
            // Rows from the file: into the resizer's ring when both dimensions change, else the decoded image.
            let fused = decoded.width != target.width && decoded.height != target.height
            let ring = (6 * decoded.height / max(1, target.height) + 10) * target.width * channels  // Lanczos3's taps + a strip
            bytes = max(held + (fused ? ring + resized : image), fused ? 0 : resizing, encoding)
        } else {
            bytes = fileBytes + max(held + image, resizing, encoding)
        }
        self.reason = reason
    }

    static func megabytes(_ bytes: Int) -> String {
        bytes >= 1 << 30 ? "\((Double(bytes) / Double(1 << 30) * 10).rounded() / 10) GiB" : "\(bytes >> 20) MiB"
    }
}

/// How a photo is decoded: at which scale, whole or streamed, and what that holds at once.
///
/// JPEGs shrink on load (libjpeg-turbo's 1/2, 1/4, 1/8) and, read from a file, stream row by row; still WebPs by the same rule (libwebp's scaled
/// decode); HEIF and AVIF decode whole. PNGs decode whole with libpng's simplified API, as
/// long as that fits the memory budget; a larger non-interlaced PNG is read row by row and shrunk by the
/// same rule while it streams, so a 16383 × 16383 PNG for a 2048-px output holds about 100 MB, not 800.
struct DecodePlan {
    var scale: Int
    var streamed: Bool
    var estimate: MemoryEstimate

    /// `fromFile`: the photo can be read again from its file (a JPEG is then decoded from it row by row).
    init(info: SourceInfo, fileBytes: Int, target: (width: Int, height: Int), options: PrepareOptions, fromFile: Bool = false) {
        let shrink = Decoder.shrinkOnLoadScale(width: info.width, height: info.height, target: target, margin: options.shrinkOnLoadMargin)
        let kept = Self.keptReference(target: target, options: options)
        switch info.format {
        case .jpeg:
            (scale, streamed) = (shrink, fromFile && Decoder.streamsJPEG(info))
            estimate = MemoryEstimate(info: info, fileBytes: fileBytes, scale: shrink, target: target, streamed: streamed, maxBytes: options.maxBytes, kept: kept)
        case .heif, .avif:
            (scale, streamed) = (1, false)
            estimate = MemoryEstimate(info: info, fileBytes: fileBytes, scale: 1, target: target, maxBytes: options.maxBytes, kept: kept)
        case .webp:
            let webpScale = info.webp!.animated ? 1 : shrink
            (scale, streamed) = (webpScale, false)
            estimate = MemoryEstimate(info: info, fileBytes: fileBytes, scale: webpScale, target: target, maxBytes: options.maxBytes, kept: kept)
        case .png:
            let whole = MemoryEstimate(info: info, fileBytes: fileBytes, scale: 1, target: target, maxBytes: options.maxBytes, kept: kept)
            if whole.bytes > options.maxMemory, shrink > 1, info.png?.interlaced == false {
                (scale, streamed) = (shrink, true)
                estimate = MemoryEstimate(info: info, fileBytes: fileBytes, scale: shrink, target: target, streamed: true, maxBytes: options.maxBytes, kept: kept)
            } else {
                (scale, streamed, estimate) = (1, false, whole)
            }
        }
    }

    /// The most a score search keeps of its reference (`ScoringReference`): the photo's, when small, or its largest
    /// thumbnail's (at most its edge each way: a fit or a square) — none at a fixed quality.
    static func keptReference(target: (width: Int, height: Int), options: PrepareOptions) -> Int {
        guard case .score = options.quality else { return 0 }
        let thumbnail = options.thumbnails.max().map { ScoringReference.keptBytes(width: min($0, target.width), height: min($0, target.height)) } ?? 0
        return max(ScoringReference.keptBytes(width: target.width, height: target.height), thumbnail)
    }
}
