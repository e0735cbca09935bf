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

    /// Refuses a file whose items claim more than twice its size (and 64 KiB).
    static func check(_ bytes: [UInt8]) throws(PhotoPrepError) {
        guard let claimed = claimedBytes(bytes), claimed > 2 * bytes.count + (64 << 10) else { return }
        throw PhotoPrepError(
            .limits, .tooLarge,
            "its items claim \(claimed > 1 << 40 ? "over a terabyte" : MemoryEstimate.megabytes(claimed)) of data in a file of \(bytes.count) bytes: the same bytes named again and again (a file stores each item's data once)")
    }

    /// The payload of the first box of `type` among the boxes in `bytes[start..<end]`.
    private static func box(_ type: String, in bytes: [UInt8], from start: Int, to end: Int) -> Range<Int>? {
        let wanted = Array(type.utf8)
        var i = start
        while i + 8 <= end {
            var reader = Reader(bytes: bytes, at: i, end: end)
            guard var size = reader.uint(4) else { return nil }
            let kind = bytes[(i + 4)..<(i + 8)]
            _ = reader.skip(4)
            var header = 8
            if size == 1 {
                guard let large = reader.uint(8) else { return nil }
                size = large
                header = 16
            } else if size == 0 {
                size = end - i
            }
            guard size >= header, size <= end - i else { return nil }
            if kind.elementsEqual(wanted) { return (i + header)..<(i + size) }
            i += size
        }
        return nil
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
