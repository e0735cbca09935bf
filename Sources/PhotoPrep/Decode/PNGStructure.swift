/// What a PNG declares in its chunks, read without decoding: IHDR, eXIf (orientation), iCCP, tRNS, acTL.
struct PNGStructure {
    var width: Int
    var height: Int
    var bitDepth: Int
    /// PNG colour type: 0 grey, 2 RGB, 3 palette, 4 grey + alpha, 6 RGB + alpha.
    var colorType: Int
    var interlaced: Bool
    var hasTransparencyChunk: Bool
    var animated: Bool
    /// The TIFF payload of an eXIf chunk.
    var exif: ArraySlice<UInt8>?
    var iccProfile: [UInt8]?
    var warnings: [String] = []
    /// Where the compressed text chunks are (zTXt, and iTXt with its compression flag set), chunk by chunk, from its
    /// length to its CRC: libpng inflates each while it reads the header, up to 8 MB apiece — 999 of them in a
    /// 7.7 MB file took 35 s — and nothing of them reaches the output.
    var compressedText: [(start: Int, end: Int)] = []

    /// Grey without any alpha: decodes to one channel.
    var isOpaqueGrey: Bool { colorType == 0 && !hasTransparencyChunk }
    var hasAlpha: Bool { colorType == 4 || colorType == 6 || hasTransparencyChunk }

    /// `bytes` without the compressed text chunks (`compressedText`), for libpng; `bytes` themselves when there are none.
    func withoutCompressedText(_ bytes: [UInt8]) -> [UInt8] {
        guard !compressedText.isEmpty else { return bytes }
        var kept: [UInt8] = []
        kept.reserveCapacity(bytes.count)
        var from = 0
        for chunk in compressedText {
            kept += bytes[from..<chunk.start]
            from = chunk.end
        }
        kept += bytes[from...]
        return kept
    }

    static func parse(_ bytes: [UInt8]) throws(PhotoPrepError) -> PNGStructure {
        func corrupt(_ why: String) -> PhotoPrepError { PhotoPrepError(.decode, .corrupt, why) }
        func be32(_ at: Int) -> Int {
            Int(bytes[at]) << 24 | Int(bytes[at + 1]) << 16 | Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
        }
        var i = 8
        guard bytes.count >= 8 + 8 + 13, String(decoding: bytes[12..<16], as: UTF8.self) == "IHDR", be32(8) == 13 else {
            throw corrupt("the PNG has no valid IHDR chunk")
        }
        var result = PNGStructure(
            width: be32(16), height: be32(20), bitDepth: Int(bytes[24]), colorType: Int(bytes[25]),
            interlaced: bytes[28] == 1, hasTransparencyChunk: false, animated: false)
        guard result.width > 0, result.height > 0 else { throw corrupt("the PNG declares a zero dimension") }
        // The PNG specification's limit (a four-byte field, but 2³¹ − 1 at most): anything larger is not a PNG.
        guard result.width <= Int(Int32.max), result.height <= Int(Int32.max) else {
            throw corrupt("the PNG declares \(result.width) × \(result.height) pixels; PNG allows at most \(Int32.max) each way")
        }
        var sawProfile = false
        while i + 8 <= bytes.count {
            let length = be32(i)
            let type = String(decoding: bytes[(i + 4)..<(i + 8)], as: UTF8.self)
            let dataStart = i + 8
            // A length beyond the end of the file is a lie (or a truncation): refused here, before libpng
            // allocates what the chunk claims (a 44-byte file declaring a 2 GiB tEXt chunk).
            guard length <= Int(Int32.max), dataStart + length + 4 <= bytes.count else {
                throw corrupt("the \(type.debugDescription) chunk at byte \(i) declares \(length) bytes but the file ends \(max(0, bytes.count - dataStart)) bytes later (truncated, or a false length)")
            }
            let data = bytes[dataStart..<(dataStart + length)]
            switch type {
            case "tRNS": result.hasTransparencyChunk = true
            case "acTL": result.animated = true
            case "eXIf": result.exif = data
            case "zTXt":
                result.compressedText.append((i, dataStart + length + 4))
            case "iTXt":
                // keyword, NUL, compression flag: 1 is compressed.
                if let nul = data.firstIndex(of: 0), nul + 1 < data.endIndex, data[nul + 1] == 1 {
                    result.compressedText.append((i, dataStart + length + 4))
                }
            case "iCCP" where !sawProfile:
                // The first only: a PNG has at most one (each was inflated, up to 16 MB apiece).
                sawProfile = true
                if let nul = data.firstIndex(of: 0), nul + 2 <= data.endIndex {
                    result.iccProfile = LibPNGReader.inflate(data[(nul + 2)...])
                    if result.iccProfile == nil { result.warnings.append("the iCCP profile could not be inflated; it was dropped") }
                }
            case "IEND": return result
            default: break
            }
            i = dataStart + length + 4
        }
        return result
    }
}
