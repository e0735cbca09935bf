/// How many bytes a HEIF file's items claim (`iloc`), read from the boxes before libheif sees them. libheif 1.15
/// reads every metadata item into memory when it opens a file, and decodes a grid's tiles however often they are
/// named: extents that name the same bytes again and again make a 1 MB file claim gigabytes (1,000 EXIF items of 32
/// extents over the same 512 KiB aborted the process at 5.8 GB; 64 tiles that are one tile took 196 s). A file
/// stores each item's data once, so its items claim no more than the file holds; `check` refuses one whose items
/// claim more than twice that.
enum HEIFItems {
    /// The bytes the items' extents add up to within the file (an extent of length 0 runs to the end of the file, or of
    /// `idat`), or
    /// nil when the file has no top-level `meta` with an `iloc` this reader understands (libheif then says what is wrong).
    static func claimedBytes(_ bytes: [UInt8]) -> Int? {
        guard let meta = box("meta", in: bytes, from: 0, to: bytes.count), meta.count >= 4,  // a FullBox
            let iloc = box("iloc", in: bytes, from: meta.lowerBound + 4, to: meta.upperBound)
        else { return nil }
        let idat = box("idat", in: bytes, from: meta.lowerBound + 4, to: meta.upperBound)?.count ?? 0
        var reader = Reader(bytes: bytes, at: iloc.lowerBound, end: iloc.upperBound)
        guard let version = reader.uint(1), version <= 2, reader.skip(3), let sizes = reader.uint(1), let more = reader.uint(1) else { return nil }
        let (offsetSize, lengthSize, baseSize) = (sizes >> 4, sizes & 15, more >> 4)
        let indexSize = version >= 1 ? more & 15 : 0
        guard [offsetSize, lengthSize, baseSize, indexSize].allSatisfy({ [0, 4, 8].contains($0) }), let items = reader.uint(version < 2 ? 2 : 4) else {
            return nil
        }
        var claimed = 0
        for _ in 0..<items {
            guard reader.skip(version < 2 ? 2 : 4) else { return nil }  // item_ID
            var method = 0
            if version >= 1 {
                guard let word = reader.uint(2) else { return nil }
                method = word & 15
            }
            guard reader.skip(2), let base = reader.uint(baseSize), let extents = reader.uint(2) else { return nil }  // data_reference_index
            let source = method == 1 ? idat : bytes.count
            for _ in 0..<extents {
                guard reader.skip(indexSize), let offset = reader.uint(offsetSize), let length = reader.uint(lengthSize) else { return nil }
                let start = base > Int.max - offset ? Int.max : base + offset
                // What lies past the end is libheif's to call truncated; what is there counts once for each extent.
                let available = max(0, source - start)
                let added = length > 0 ? min(length, available) : available
                claimed = claimed > Int.max - added ? Int.max : claimed + added
            }
        }
        return claimed
    }

    /// Refuses a file whose items claim more than twice its size (and 64 KiB), and one with an HEVC image (a grid's
    /// tile too) whose bitstream is larger than its declared size (`codedSizeLie`).
    static func check(_ bytes: [UInt8]) throws(PhotoPrepError) {
        if let claimed = claimedBytes(bytes), claimed > 2 * bytes.count + (64 << 10) {
            throw PhotoPrepError(
                .limits, .tooLarge,
                "its items claim \(claimed > 1 << 40 ? "over a terabyte" : MemoryEstimate.megabytes(claimed)) of data in a file of \(bytes.count) bytes: the same bytes named again and again (a file stores each item's data once)")
        }
        if let lie = codedSizeLie(bytes) {
            throw PhotoPrepError(
                .limits, .tooLarge,
                "image item \(lie.item) is coded as \(lie.coded.width) × \(lie.coded.height) pixels where its header (ispe) says \(lie.declared.width) × \(lie.declared.height)")
        }
    }

    /// The first HEVC-coded item whose bitstream — the picture size of its `hvcC`'s sequence parameter set, less its
    /// conformance window — is wider or taller than its `ispe`. libheif sizes everything by `ispe` and the decoder by
    /// the bitstream: a tile declared 64 × 64 over 16384 × 16384 coded pixels was decoded whole (1.6 GB; a grid naming
    /// such tiles took minutes) before any size could be compared.
    static func codedSizeLie(_ bytes: [UInt8]) -> (item: Int, coded: (width: Int, height: Int), declared: (width: Int, height: Int))? {
        guard let meta = box("meta", in: bytes, from: 0, to: bytes.count), meta.count >= 4,
            let iprp = box("iprp", in: bytes, from: meta.lowerBound + 4, to: meta.upperBound),
            let ipco = box("ipco", in: bytes, from: iprp.lowerBound, to: iprp.upperBound),
            let ipma = box("ipma", in: bytes, from: iprp.lowerBound, to: iprp.upperBound)
        else { return nil }
        let properties = children(in: bytes, from: ipco.lowerBound, to: ipco.upperBound)
        var reader = Reader(bytes: bytes, at: ipma.lowerBound, end: ipma.upperBound)
        guard let version = reader.uint(1), let flags = reader.uint(3), let entries = reader.uint(4) else { return nil }
        for _ in 0..<entries {
            guard let item = reader.uint(version < 1 ? 2 : 4), let associations = reader.uint(1) else { return nil }
            var coded: (width: Int, height: Int)?
            var declared: (width: Int, height: Int)?
            for _ in 0..<associations {
                guard let entry = reader.uint(flags & 1 == 1 ? 2 : 1) else { return nil }
                let index = entry & (flags & 1 == 1 ? 0x7FFF : 0x7F)  // 1-based; the top bit says "essential"
                guard index >= 1, index <= properties.count else { continue }
                let property = properties[index - 1]
                if property.type == "hvcC" { coded = HEVCParameters.pictureSize(hvcC: bytes[property.payload]) }
                if property.type == "ispe", property.payload.count >= 12 {
                    var size = Reader(bytes: bytes, at: property.payload.lowerBound + 4, end: property.payload.upperBound)
                    if let width = size.uint(4), let height = size.uint(4) { declared = (width, height) }
                }
            }
            if let coded, let declared, coded.width > declared.width || coded.height > declared.height {
                return (item, coded, declared)
            }
        }
        return nil
    }

    /// The boxes in `bytes[start..<end]`, in order: their types and payloads.
    private static func children(in bytes: [UInt8], from start: Int, to end: Int) -> [Box] {
        var found: [Box] = []
        var i = start
        while i + 8 <= end, let payload = box(at: i, in: bytes, to: end) {
            found.append(Box(type: String(decoding: bytes[(i + 4)..<(i + 8)], as: UTF8.self), payload: payload))
            i = payload.upperBound
        }
        return found
    }

    private struct Box {
        var type: String
        var payload: Range<Int>
    }

    /// The payload of the first box of `type` among the boxes in `bytes[start..<end]`.
    private static func box(_ type: String, in bytes: [UInt8], from start: Int, to end: Int) -> Range<Int>? {
        let wanted = Array(type.utf8)
        var i = start
        while i + 8 <= end, let payload = box(at: i, in: bytes, to: end) {
            if bytes[(i + 4)..<(i + 8)].elementsEqual(wanted) { return payload }
            i = payload.upperBound
        }
        return nil
    }

    /// The payload of the box that starts at `i` (nil when its size does not fit before `end`).
    private static func box(at i: Int, in bytes: [UInt8], to end: Int) -> Range<Int>? {
        var reader = Reader(bytes: bytes, at: i, end: end)
        guard var size = reader.uint(4), reader.skip(4) else { return nil }
        var header = 8
        if size == 1 {
            guard let large = reader.uint(8) else { return nil }
            size = large
            header = 16
        } else if size == 0 {
            size = end - i
        }
        guard size >= header, size <= end - i else { return nil }
        return (i + header)..<(i + size)
    }

    /// Big-endian fields of 0, 1, 2, 4 or 8 bytes, within `end`.
    private struct Reader {
        let bytes: [UInt8]
        var at: Int
        let end: Int

        mutating func uint(_ size: Int) -> Int? {
            guard size >= 0, at + size <= end else { return nil }
            var value: UInt64 = 0
            for byte in bytes[at..<(at + size)] { value = value << 8 | UInt64(byte) }
            at += size
            return value > UInt64(Int.max) ? Int.max : Int(value)
        }

        mutating func skip(_ count: Int) -> Bool {
            guard at + count <= end else { return false }
            at += count
            return true
        }
    }
}
