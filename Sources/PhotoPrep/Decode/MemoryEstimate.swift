/// The most memory one photo's decode, resize and encode hold at once, estimated from its header
/// before any pixel is allocated, so that a photo over the budget (`PrepareOptions.maxMemory`) is
/// refused with a reason instead of exhausting the machine. What dominates:
///
/// | source | held whole |
/// |---|---|
/// | progressive (or multi-scan) JPEG | every DCT coefficient: 2 bytes × 64 per 8 × 8 block of each component (a 16383² 4:4:4 file: 1.5 GiB) |
/// | baseline JPEG | the decoded image at the shrink-on-load scale (libjpeg keeps only a few rows of its own) |
/// | PNG | the decoded image at full size (libpng's simplified API has no scaled decode) |
///
/// plus the file itself, the resizer's intermediate (output width × decoded height) and the output.
/// The estimate errs high by a little (libjpeg's own tables and row buffers are counted generously).
struct MemoryEstimate: Equatable {
    var bytes: Int
    /// What dominates, for the refusal's message.
    var reason: String

    init(info: SourceInfo, fileBytes: Int, scale: Int, target: (width: Int, height: Int)) {
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
            decoded = (info.width, info.height)
            if info.png?.isOpaqueGrey == true { channels = 1 }
            held = info.width * 8 * 4  // libpng's rows (16-bit, with alpha)
            reason = "a PNG of \(info.width) × \(info.height) is decoded whole (\(Self.megabytes(decoded.width * decoded.height * channels)))"
        }
        let image = decoded.width * decoded.height * channels
        let resized = target.width * decoded.height * 3 + 3 * target.width * target.height * 3  // passes, orientation, encoder
        bytes = fileBytes + held + image + resized
        self.reason = reason
    }

    static func megabytes(_ bytes: Int) -> String {
        bytes >= 1 << 30 ? "\((Double(bytes) / Double(1 << 30) * 10).rounded() / 10) GiB" : "\(bytes >> 20) MiB"
    }
}
