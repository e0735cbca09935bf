/// The formats photoprep decodes, recognised from the bytes, never from the file name.
public enum ImageFormat: String, Sendable, Codable {
    case jpeg = "JPEG"
    case png = "PNG"

    /// Recognises JPEG and PNG by their signatures; anything else throws `unsupportedFormat`
    /// naming what was found (GIF, WebP, HEIC, TIFF, text, an empty file …).
    public static func sniff(_ bytes: [UInt8]) throws(PhotoPrepError) -> ImageFormat {
        if bytes.starts(with: [0xFF, 0xD8, 0xFF]) { return .jpeg }
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        throw PhotoPrepError(.sniff, .unsupportedFormat, "\(describe(bytes)); only JPEG and PNG are supported")
    }

    /// A short human description of what unsupported bytes look like.
    static func describe(_ bytes: [UInt8]) -> String {
        func ascii(_ range: Range<Int>) -> String {
            guard bytes.count >= range.upperBound else { return "" }
            return String(decoding: bytes[range], as: UTF8.self)
        }
        if bytes.isEmpty { return "the file is empty" }
        if ascii(0..<4) == "GIF8" { return "found a GIF image" }
        if ascii(0..<4) == "RIFF" && ascii(8..<12) == "WEBP" { return "found a WebP image" }
        if ascii(4..<8) == "ftyp" {
            let brand = ascii(8..<12)
            switch brand {
            case "heic", "heix", "hevc", "heim", "heis", "mif1", "msf1": return "found a HEIF/HEIC image (brand \(brand))"
            case "avif", "avis": return "found an AVIF image"
            default: return "found an ISO media file (brand \(brand))"
            }
        }
        if bytes.starts(with: [0x49, 0x49, 0x2A, 0x00]) || bytes.starts(with: [0x4D, 0x4D, 0x00, 0x2A]) {
            return "found a TIFF image"
        }
        if ascii(0..<2) == "BM" { return "found a BMP image" }
        if ascii(0..<5) == "%PDF-" { return "found a PDF document" }
        if bytes.starts(with: [0xFF, 0x0A]) || bytes.starts(with: [0x00, 0x00, 0x00, 0x0C, 0x4A, 0x58, 0x4C, 0x20]) {
            return "found a JPEG XL image"
        }
        if bytes.starts(with: [0xFF, 0xD8]) { return "found a damaged JPEG (no marker after SOI)" }
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
