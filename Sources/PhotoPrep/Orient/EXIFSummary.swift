/// The few EXIF facts the pipeline needs, read from a TIFF structure (JPEG APP1 or PNG eXIf).
struct EXIFSummary: Equatable {
    /// Tag 0x0112 in IFD0, when present and valid (1–8).
    var orientation: Orientation?
    /// Whether IFD0 points at a GPS IFD (tag 0x8825).
    var hasGPS: Bool

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
        guard let ifd = u32(4), let count = u16(ifd) else { return .empty }
        var summary = EXIFSummary.empty
        for entry in 0..<count {
            let at = ifd + 2 + entry * 12
            guard let tag = u16(at) else { break }
            switch tag {
            case 0x0112:
                if let type = u16(at + 2), type == 3, let value = u16(at + 8) {
                    summary.orientation = Orientation(rawValue: value)
                }
            case 0x8825:
                summary.hasGPS = true
            default:
                break
            }
        }
        return summary
    }
}
