/// The formats photoprep decodes, recognised from the bytes, never from the file name.
public enum ImageFormat: String, Sendable, Codable, CaseIterable {
    case jpeg = "JPEG"
    case png = "PNG"
    /// HEIF with HEVC-coded images: what iPhones write (`.heic`), grids of tiles included.
    case heif = "HEIF"
    /// HEIF with AV1-coded images.
    case avif = "AVIF"
    case webp = "WebP"

    /// Recognises each format by its signature — for HEIF and AVIF the ISO media `ftyp` box's brands —
    /// from the first 16 bytes or more; anything else throws `unsupportedFormat` naming what was found
    /// (GIF, TIFF, a video, text, an empty file …).
    public static func sniff(_ bytes: [UInt8]) throws(PhotoPrepError) -> ImageFormat {
        if bytes.starts(with: [0xFF, 0xD8, 0xFF]) { return .jpeg }
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        // RIFF, its size, WEBP, then the first chunk: VP8 (lossy), VP8L (lossless) or VP8X (extended).
        if bytes.count >= 16, bytes[0..<4].elementsEqual("RIFF".utf8), bytes[8..<15].elementsEqual("WEBPVP8".utf8),
            " LX".utf8.contains(bytes[15]) {
            return .webp
        }
        if let brands = FileTypeBox(bytes) {
            if brands.isAVIF { return .avif }
            if brands.isHEIF { return .heif }
        }
        // A photo of a supported format that is damaged or cut off this early is a photo that failed, not a file to skip.
        if let damage = damage(bytes) { throw PhotoPrepError(.sniff, .corrupt, damage) }
        throw PhotoPrepError(.sniff, .unsupportedFormat, "\(describe(bytes)); only JPEG, PNG, HEIC/HEIF, AVIF and WebP are supported")
    }

    /// What is wrong with bytes that start as a supported format but are not one: a JPEG's start marker with no
    /// marker after it, a WebP's header with no image chunk, an ISO media file cut off before its brand.
    static func damage(_ bytes: [UInt8]) -> String? {
        if bytes.starts(with: [0xFF, 0xD8]) {
            return bytes.count <= 3 ? "a JPEG cut off after its start marker (SOI): truncated" : "a damaged JPEG: no marker after its start (SOI)"
        }
        if bytes.count >= 12, bytes[0..<4].elementsEqual("RIFF".utf8), bytes[8..<12].elementsEqual("WEBP".utf8) {
            return bytes.count < 16 ? "a WebP cut off after its header: truncated" : "a damaged WebP: no VP8, VP8L or VP8X chunk first"
        }
        if bytes.count >= 8, bytes.count < 12, bytes[4..<8].elementsEqual("ftyp".utf8) {
            return "an ISO media file (HEIF, AVIF) cut off before its brand: truncated"
        }
        return nil
    }

    /// The MIME type of the format (`image/heic` for HEVC-coded HEIF, as iOS labels it).
    public var mimeType: String {
        switch self {
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        case .heif: "image/heic"
        case .avif: "image/avif"
        case .webp: "image/webp"
        }
    }

    /// The brands of an ISO base media file's leading `ftyp` box: the major brand, then as many compatible
    /// brands as the bytes at hand hold (a server sniffs only the first 16 bytes: the major brand).
    struct FileTypeBox {
        var brands: [String]

        init?(_ bytes: [UInt8]) {
            guard bytes.count >= 12, bytes[4..<8].elementsEqual("ftyp".utf8) else { return nil }
            let size = Int(bytes[0]) << 24 | Int(bytes[1]) << 16 | Int(bytes[2]) << 8 | Int(bytes[3])
            guard size >= 16 else { return nil }
            brands = [String(decoding: bytes[8..<12], as: UTF8.self)]
            var at = 16
            while at + 4 <= min(size, bytes.count) {
                brands.append(String(decoding: bytes[at..<(at + 4)], as: UTF8.self))
                at += 4
            }
        }

        /// An AV1 image (`avif`, `avis`) — unless it also names HEVC, which libheif would decode first.
        var isAVIF: Bool { brands.contains { $0 == "avif" || $0 == "avis" } && !isHEVC }
        /// HEVC-coded (`heic`, `heix`, `heim`, `heis`, `hevc`, `hevx`), or the structural HEIF brands (`mif1`,
        /// `msf1`, `miaf`) whose codec the decoder learns from the image items.
        var isHEIF: Bool { isHEVC || brands.contains { ["mif1", "msf1", "miaf"].contains($0) } }
        private var isHEVC: Bool { brands.contains { ["heic", "heix", "heim", "heis", "hevc", "hevx"].contains($0) } }
    }

    /// A short human description of what unsupported bytes look like.
    static func describe(_ bytes: [UInt8]) -> String {
        func ascii(_ range: Range<Int>) -> String {
            guard bytes.count >= range.upperBound else { return "" }
            return String(decoding: bytes[range], as: UTF8.self)
        }
        if bytes.isEmpty { return "the file is empty" }
        if ascii(0..<4) == "GIF8" { return "found a GIF image" }
        if ascii(4..<8) == "ftyp" { return "found an ISO media file of brand \(ascii(8..<12).debugDescription), not a HEIF image (a video?)" }
        if bytes.starts(with: [0x49, 0x49, 0x2A, 0x00]) || bytes.starts(with: [0x4D, 0x4D, 0x00, 0x2A]) {
            return "found a TIFF image"
        }
        if ascii(0..<2) == "BM" { return "found a BMP image" }
        if ascii(0..<5) == "%PDF-" { return "found a PDF document" }
        if bytes.starts(with: [0xFF, 0x0A]) || bytes.starts(with: [0x00, 0x00, 0x00, 0x0C, 0x4A, 0x58, 0x4C, 0x20]) {
            return "found a JPEG XL image"
        }
        let head = bytes.prefix(512)
        let printable = head.allSatisfy { $0 == 0x09 || $0 == 0x0A || $0 == 0x0D || ($0 >= 0x20 && $0 != 0x7F) }
        if printable && String(validating: head, as: UTF8.self) != nil {
            return "found text, not an image"
        }
        let hex = bytes.prefix(8).map { byte in
            let digits = String(byte, radix: 16, uppercase: true)
            return digits.count == 1 ? "0" + digits : digits
        }
        return "unrecognised data (starts with \(hex.joined(separator: " ")))"
    }
}
