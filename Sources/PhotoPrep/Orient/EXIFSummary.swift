/// The few EXIF facts the pipeline needs, read from a TIFF structure (JPEG APP1 or PNG eXIf).
struct EXIFSummary: Equatable {
    /// Tag 0x0112 in IFD0, when present and valid (1–8).
    var orientation: Orientation?
    /// Whether IFD0 points at a GPS IFD (tag 0x8825).
    var hasGPS: Bool
    /// `DateTimeOriginal` (0x9003) with `OffsetTimeOriginal` (0x9011), from the Exif IFD (0x8769), when both are valid.
    var takenAt: CaptureTime?

    static let empty = EXIFSummary(orientation: nil, hasGPS: false)

    /// Reads IFD0. Damaged EXIF never fails a photo: what cannot be read is reported absent.
    static func parse(_ tiff: ArraySlice<UInt8>?) -> EXIFSummary {
        guard let tiff, tiff.count >= 8 else { return .empty }
        let base = tiff.startIndex
        let little: Bool
        switch (tiff[base], tiff[base + 1]) {
        case (0x49, 0x49): little = true
        case (0x4D, 0x4D): little = false
        default: return .empty
        }
        func u16(_ offset: Int) -> Int? {
            guard offset >= 0, offset + 2 <= tiff.count else { return nil }
            let a = Int(tiff[base + offset]), b = Int(tiff[base + offset + 1])
            return little ? a | b << 8 : a << 8 | b
        }
        func u32(_ offset: Int) -> Int? {
            guard let lo = u16(little ? offset : offset + 2), let hi = u16(little ? offset + 2 : offset) else { return nil }
            return hi << 16 | lo
        }
        /// The entries of the IFD at `offset`: each one's tag and where its 12 bytes start.
        func entries(_ offset: Int) -> [(tag: Int, at: Int)] {
            guard let count = u16(offset) else { return [] }
            return (0..<count).compactMap { entry in
                let at = offset + 2 + entry * 12
                return u16(at).map { ($0, at) }
            }
        }
        /// An ASCII entry's text, up to its first NUL (nil when it is not ASCII or lies outside the structure).
        func ascii(_ at: Int) -> String? {
            guard u16(at + 2) == 2, let count = u32(at + 4), count <= 64 else { return nil }
            guard let start = count <= 4 ? at + 8 : u32(at + 8), start >= 0, start + count <= tiff.count else { return nil }
            let bytes = tiff[(base + start)..<(base + start + count)].prefix { $0 != 0 }
            return bytes.allSatisfy({ $0 < 0x80 }) ? String(decoding: bytes, as: UTF8.self) : nil
        }
        guard let ifd = u32(4) else { return .empty }
        var summary = EXIFSummary.empty
        var exifIFD: Int?
        for (tag, at) in entries(ifd) {
            switch tag {
            case 0x0112:
                if let type = u16(at + 2), type == 3, let value = u16(at + 8) {
                    summary.orientation = Orientation(rawValue: value)
                }
            case 0x8825:
                summary.hasGPS = true
            case 0x8769:
                exifIFD = u32(at + 8)
            default:
                break
            }
        }
        if let exifIFD, exifIFD != ifd {
            var dateTime: String?, offset: String?
            for (tag, at) in entries(exifIFD) {
                if tag == 0x9003 { dateTime = ascii(at) }
                if tag == 0x9011 { offset = ascii(at) }
            }
            if let dateTime, let offset { summary.takenAt = CaptureTime(dateTime: dateTime, offset: offset) }
        }
        return summary
    }
}
