/// Byte-level edits of JPEG marker segments: writing an ICC profile, rebuilding a JPEG from the
/// segments we keep (metadata removed losslessly).
enum JPEGSegments {
    static let iccSignature = Array("ICC_PROFILE\0".utf8)
    /// Largest ICC data per APP2 segment: 65,535 − 2 (length) − 14 (signature, sequence, count).
    static let iccChunkSize = 65_519

    /// The APP2 segments carrying `profile`, or nil when it needs more than 255 of them.
    static func iccSegments(_ profile: [UInt8]) -> [UInt8]? {
        let chunks = stride(from: 0, to: profile.count, by: iccChunkSize).map {
            profile[$0..<min($0 + iccChunkSize, profile.count)]
        }
        guard !chunks.isEmpty, chunks.count <= 255 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(profile.count + chunks.count * 18)
        for (index, chunk) in chunks.enumerated() {
            let length = 2 + iccSignature.count + 2 + chunk.count
            out += [0xFF, 0xE2, UInt8(length >> 8), UInt8(length & 0xFF)]
            out += iccSignature
            out += [UInt8(index + 1), UInt8(chunks.count)]
            out += chunk
        }
        return out
    }

    /// `jpeg` with `segments` inserted after SOI and a leading JFIF APP0 segment.
    static func inserting(_ segments: [UInt8], into jpeg: UnsafeRawBufferPointer) -> [UInt8] {
        var at = 2
        if jpeg.count > 6, jpeg[2] == 0xFF, jpeg[3] == 0xE0 {
            at = 4 + (Int(jpeg[4]) << 8 | Int(jpeg[5]))
        }
        var out = [UInt8]()
        out.reserveCapacity(jpeg.count + segments.count)
        out += jpeg[0..<at]
        out += segments
        out += jpeg[at...]
        return out
    }

    /// `jpeg` rebuilt from the segments we keep: SOI; the header segments that are not metadata (the
    /// ICC profile only when `keepICC`, a JFIF APP0 without its thumbnail); then the scans, their tables
    /// and EOI. Everything else goes, wherever it sits: application segments and comments between
    /// progressive scans, and whatever follows EOI (a second JPEG with GPS, a motion photo's video).
    /// Entropy-coded data is copied untouched, so no pixel changes. The result is as long as `jpeg`
    /// only when nothing was dropped.
    static func rebuilt(_ jpeg: [UInt8], structure: JPEGStructure, keepICC: Bool) -> [UInt8] {
        var out: [UInt8] = [0xFF, 0xD8]
        out.reserveCapacity(jpeg.count)
        for segment in structure.segments {
            let icc = segment.marker == 0xE2 && jpeg[segment.payload].starts(with: iccSignature)
            if structure.isMetadata(segment, bytes: jpeg) || (icc && !keepICC) { continue }
            if segment.marker == 0xE0, segment.payload.count > jfifLength {
                // JFIF with a thumbnail (or extra bytes): the header alone, thumbnail size 0 × 0.
                out += [0xFF, 0xE0, 0x00, UInt8(2 + jfifLength)]
                out += jpeg[segment.payload.prefix(jfifLength - 2)]
                out += [0, 0]
                continue
            }
            out += jpeg[segment.range]
        }
        for piece in structure.scanPieces { out += jpeg[piece.range] }
        return out
    }

    /// A JFIF APP0 payload without thumbnail: "JFIF\0", version, units, densities, thumbnail 0 × 0.
    static let jfifLength = 14

    /// The colour space signature of an ICC profile header ("RGB ", "GRAY", "CMYK" …).
    static func iccColorSpace(_ profile: [UInt8]) -> String? {
        guard profile.count >= 128 else { return nil }
        return String(decoding: profile[16..<20], as: UTF8.self)
    }
}
