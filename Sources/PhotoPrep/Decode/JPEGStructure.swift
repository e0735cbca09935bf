#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a JPEG declares before its first scan, read by walking the marker segments from SOI to SOS.
///
/// TurboJPEG 2.1 gives no access to markers, so EXIF (APP1), ICC (APP2, possibly split), Adobe (APP14)
/// and the frame header (SOFn) are read here, without decoding anything.
struct JPEGStructure {
    /// One marker segment: the marker byte and the byte range of the whole segment (marker included).
    struct Segment {
        var marker: UInt8
        var range: Range<Int>
        var payload: Range<Int> { (range.lowerBound + 4)..<range.upperBound }
    }

    /// A byte range of the file. (An array of `Range<Int>` would cost each process a walk of every protocol conformance
    /// record in the binary, the runtime checking that `Int` is `Comparable`: 0.5 M instructions.)
    struct Piece {
        var range: Range<Int>
    }

    enum Coding: String { case baseline, extendedSequential = "extended sequential", progressive, lossless }

    var width: Int
    var height: Int
    var precision: Int
    var components: Int
    /// Each component's sampling factors (horizontal, vertical), from the frame header.
    var sampling: [(h: Int, v: Int)] = []
    var coding: Coding
    var arithmetic: Bool
    /// Segments before the first SOS, in file order (SOI excluded).
    var segments: [Segment]
    /// Where the first SOS segment starts.
    var scanStart: Int
    /// The TIFF payload of the EXIF APP1 segment (after "Exif\0\0").
    var exif: ArraySlice<UInt8>?
    /// The ICC profile reassembled from its APP2 chunks, in sequence order.
    var iccProfile: [UInt8]?
    /// The transform byte of an Adobe APP14 segment (0 = none/CMYK, 1 = YCbCr, 2 = YCCK).
    var adobeTransform: UInt8?
    var warnings: [String] = []
    /// What the image needs from the first SOS on, in file order: scan headers, tables, entropy-coded
    /// data (restart markers included) and EOI. Application segments and comments between scans are
    /// not in it (`strays`), nor anything after EOI (`trailingBytes`).
    var scanPieces: [Piece] = []
    /// APPn and COM segments after the first scan (EXIF or comments between progressive scans).
    var strays: [Segment] = []
    /// Bytes after the end-of-image marker: a second JPEG, a ZIP, a phone's "motion photo" video …
    var trailingBytes = 0
    /// Whether the walk after the first scan found every marker where it belongs and an EOI. When not
    /// (a truncated file, junk between markers), the file is never passed through or stripped: it is
    /// decoded and re-encoded, which keeps nothing but pixels.
    var wellFormed = false
    /// Scans (SOS segments) in the file: more than one means libjpeg holds every coefficient.
    var scanCount = 0
    /// Bytes of entropy-coded data in all scans.
    var entropyBytes = 0

    /// 8 × 8 blocks of coefficients in the whole image, all components.
    var blockCount: Int {
        let hMax = sampling.map(\.h).max() ?? 1, vMax = sampling.map(\.v).max() ?? 1
        return sampling.reduce(0) { sum, factors in
            let w = (width * factors.h + hMax - 1) / hMax, h = (height * factors.v + vMax - 1) / vMax
            return sum + ((w + 7) / 8) * ((h + 7) / 8)
        }
    }

    /// Segments that carry nothing needed to show the pixels right: EXIF, XMP, IPTC, comments,
    /// and application data other than JFIF, ICC and Adobe.
    func isMetadata(_ segment: Segment, bytes: [UInt8]) -> Bool {
        switch segment.marker {
        case 0xFE: return true  // COM
        case 0xE0: return !bytes[segment.payload].starts(with: Array("JFIF".utf8))
        case 0xE2: return !bytes[segment.payload].starts(with: Array("ICC_PROFILE\0".utf8))
        case 0xEE: return !bytes[segment.payload].starts(with: Array("Adobe".utf8))
        case 0xE1...0xEF: return true  // EXIF, XMP, IPTC (APP13), maker data
        default: return false
        }
    }

    static func parse(_ bytes: [UInt8]) throws(PhotoPrepError) -> JPEGStructure {
        func corrupt(_ why: String) -> PhotoPrepError { PhotoPrepError(.decode, .corrupt, why) }
        guard bytes.count >= 2, bytes[0] == 0xFF, bytes[1] == 0xD8 else { throw corrupt("no JPEG start-of-image marker") }
        guard bytes.count >= 4 else { throw corrupt("truncated: the file ends after its start-of-image marker (\(bytes.count) bytes)") }

        var segments: [Segment] = []
        var frame: (width: Int, height: Int, precision: Int, components: Int, coding: Coding, arithmetic: Bool)?
        var sampling: [(h: Int, v: Int)] = []
        var exif: ArraySlice<UInt8>?
        var iccChunks: [(sequence: UInt8, data: ArraySlice<UInt8>)] = []
        var adobe: UInt8?
        var warnings: [String] = []
        var i = 2
        while true {
            guard i < bytes.count else { throw corrupt("the file ends before the first scan (truncated header)") }
            if bytes[i] != 0xFF {
                // Junk where a marker belongs: libjpeg skips to the next 0xFF with a warning, and so do we.
                guard let next = bytes[i...].firstIndex(of: 0xFF) else { throw corrupt("no marker after byte \(i)") }
                let marker = next + 1 < bytes.count ? String(bytes[next + 1], radix: 16) : "?"
                warnings.append("\(next - i) extraneous bytes before marker 0x\(marker) at byte \(i)")
                i = next
            }
            var start = i
            while i < bytes.count && bytes[i] == 0xFF { start = i; i += 1 }  // fill bytes
            guard i < bytes.count else { throw corrupt("the file ends inside a marker") }
            let marker = bytes[i]
            i += 1
            if marker == 0x01 || (0xD0...0xD8).contains(marker) { continue }  // standalone markers
            if marker == 0xD9 { throw corrupt("end-of-image before any scan") }
            guard i + 2 <= bytes.count else { throw corrupt("the file ends inside the 0x\(String(marker, radix: 16, uppercase: true)) segment header") }
            var length = Int(bytes[i]) << 8 | Int(bytes[i + 1])
            if length < 2, (0xE0...0xEF).contains(marker) || marker == 0xFE {
                // An application segment or comment cut to a length of 0 or 1: libjpeg skips just the length
                // field and reads on, and so do we (the segment is metadata: it is never kept).
                warnings.append("marker 0x\(String(marker, radix: 16, uppercase: true)) has an invalid length \(length); skipped")
                length = 2
            }
            guard length >= 2 else { throw corrupt("marker 0x\(String(marker, radix: 16, uppercase: true)) has an invalid length \(length)") }
            guard i + length <= bytes.count else {
                throw corrupt("marker 0x\(String(marker, radix: 16, uppercase: true)) claims \(length) bytes but the file ends first (truncated or oversized header)")
            }
            let segment = Segment(marker: marker, range: start..<(i + length))
            let payload = bytes[segment.payload]
            switch marker {
            case 0xC0...0xCF where marker != 0xC4 && marker != 0xC8 && marker != 0xCC:
                guard payload.count >= 6 else { throw corrupt("the frame header (SOF) is too short") }
                let p = payload.startIndex
                let coding: Coding = switch marker & 0x03 {
                case 0: marker == 0xC0 ? .baseline : .extendedSequential
                case 1: .extendedSequential
                case 2: .progressive
                default: .lossless
                }
                sampling = stride(from: p + 6, to: payload.endIndex - 2, by: 3).prefix(Int(payload[p + 5])).map {
                    (h: max(1, Int(payload[$0 + 1] >> 4)), v: max(1, Int(payload[$0 + 1] & 0x0F)))
                }
                frame = (
                    width: Int(payload[p + 3]) << 8 | Int(payload[p + 4]),
                    height: Int(payload[p + 1]) << 8 | Int(payload[p + 2]),
                    precision: Int(payload[p]), components: Int(payload[p + 5]),
                    coding: marker == 0xC0 ? .baseline : coding, arithmetic: marker >= 0xC9)
            case 0xE1 where payload.starts(with: Array("Exif\0\0".utf8)) && exif == nil:
                exif = payload.dropFirst(6)
            case 0xE2 where payload.starts(with: Array("ICC_PROFILE\0".utf8)):
                if payload.count >= 14 {
                    iccChunks.append((payload[payload.startIndex + 12], payload.dropFirst(14)))
                }
            case 0xEE where payload.starts(with: Array("Adobe".utf8)) && payload.count >= 12:
                adobe = payload[payload.startIndex + 11]
            default:
                break
            }
            if marker == 0xDA {
                guard let frame else { throw corrupt("a scan starts before any frame header (SOF)") }
                var icc: [UInt8]?
                if !iccChunks.isEmpty {
                    let ordered = iccChunks.sorted { $0.sequence < $1.sequence }
                    if Set(ordered.map(\.sequence)).count == ordered.count {
                        icc = ordered.flatMap(\.data)
                    } else {
                        warnings.append("the ICC profile's APP2 chunks are numbered inconsistently; the profile was dropped")
                    }
                }
                var structure = JPEGStructure(
                    width: frame.width, height: frame.height, precision: frame.precision,
                    components: frame.components, coding: frame.coding, arithmetic: frame.arithmetic,
                    segments: segments, scanStart: segment.range.lowerBound, exif: exif, iccProfile: icc,
                    adobeTransform: adobe, warnings: warnings)
                structure.sampling = sampling.count == frame.components ? sampling : Array(repeating: (1, 1), count: frame.components)
                structure.walkScans(bytes)
                // Huffman coding spends at least a bit on every block's DC coefficient: a file with less
                // data than that cannot hold the whole image, and decodes mostly as flat grey.
                if !structure.arithmetic, structure.entropyBytes * 8 < structure.blockCount {
                    structure.warnings.append(
                        "only \(structure.entropyBytes) bytes of image data for \(structure.blockCount) blocks of \(structure.width) × \(structure.height) pixels: most of the image is missing")
                }
                return structure
            }
            segments.append(segment)
            i = segment.range.upperBound
        }
    }

    /// Walks the file from the first SOS to EOI: scan headers and tables are kept, entropy-coded data is
    /// skipped over (stuffed `FF 00`, restart markers and fill bytes stay inside it), application
    /// segments and comments become `strays`, and whatever follows EOI is counted as trailing.
    private mutating func walkScans(_ bytes: [UInt8]) {
        let n = bytes.count
        var i = scanStart
        var pieces: [Piece] = []
        var strays: [Segment] = []
        while i + 1 < n {
            guard bytes[i] == 0xFF else { break }  // junk where a marker belongs
            var m = i + 1
            while m < n && bytes[m] == 0xFF { m += 1 }  // fill bytes
            guard m < n else { break }
            let marker = bytes[m]
            if marker == 0xD9 {
                pieces.append(Piece(range: i..<(m + 1)))
                scanPieces = pieces
                self.strays = strays
                trailingBytes = n - (m + 1)
                wellFormed = true
                return
            }
            if (0xD0...0xD7).contains(marker) || marker == 0x01 {
                pieces.append(Piece(range: i..<(m + 1)))
                i = m + 1
                continue
            }
            guard marker != 0x00, m + 2 < n else { break }
            let end = m + 1 + (Int(bytes[m + 1]) << 8 | Int(bytes[m + 2]))
            guard end <= n, end >= m + 3 else { break }
            let segment = Segment(marker: marker, range: i..<end)
            if (0xE0...0xEF).contains(marker) || marker == 0xFE {
                strays.append(segment)
                i = end
                continue
            }
            pieces.append(Piece(range: segment.range))
            i = end
            guard marker == 0xDA else { continue }
            scanCount += 1
            // Entropy-coded data runs to the next marker that is not a stuffed byte or a restart.
            let j = Self.endOfEntropyData(bytes, from: end)
            if j > end { pieces.append(Piece(range: end..<j)) }
            entropyBytes += j - end
            i = j
        }
        // No EOI where it should be: keep what was walked, say the file is not well formed.
        pieces.append(Piece(range: i..<n))
        scanPieces = pieces
        self.strays = strays
        trailingBytes = 0
        wellFormed = false
    }

    /// Where the entropy-coded data starting at `start` ends: the first 0xFF (after fill bytes) not followed
    /// by a stuffed 0x00 or a restart marker, or the end of the file. `memchr` finds the 0xFF bytes, so a
    /// 16 MB photo costs a fraction of a millisecond rather than a bounds-checked loop over every byte.
    static func endOfEntropyData(_ bytes: [UInt8], from start: Int) -> Int {
        bytes.withUnsafeBufferPointer { buffer in
            let n = buffer.count
            guard let base = buffer.baseAddress else { return n }
            var j = start
            while j < n {
                guard let found = memchr(base + j, 0xFF, n - j) else { return n }
                j = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
                var k = j + 1
                while k < n && buffer[k] == 0xFF { k += 1 }
                if k < n && (buffer[k] == 0x00 || (0xD0...0xD7).contains(buffer[k])) { j = k + 1; continue }
                return j
            }
            return n
        }
    }
}
