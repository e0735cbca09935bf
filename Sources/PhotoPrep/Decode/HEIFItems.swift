/// How many bytes a HEIF file's items claim (`iloc`), read from the boxes before libheif sees them. libheif 1.15
/// reads every metadata item into memory when it opens a file, and decodes a grid's tiles however often they are
/// named: extents that name the same bytes again and again make a 1 MB file claim gigabytes (1,000 EXIF items of 32
/// extents over the same 512 KiB aborted the process at 5.8 GB; 64 tiles that are one tile took 196 s). A file
/// stores each item's data once, so its items claim no more than the file holds; `check` refuses one whose items
/// claim more than twice that.
enum HEIFItems {
    /// The bytes the items' extents add up to within the file (an extent of length 0 runs to the end of the file, or of
    /// `idat`), or nil when the file has no top-level `meta` with an `iloc` this reader understands (libheif then says
    /// what is wrong).
    static func claimedBytes(_ bytes: [UInt8]) -> Int? { locations(bytes)?.claimed }

    /// `claimedBytes`, and where each item's first extent lies in `bytes` (its data when it has one extent, as a grid's
    /// description does).
    static func locations(_ bytes: [UInt8]) -> (claimed: Int, first: [Int: Range<Int>])? {
        guard let meta = box("meta", in: bytes, from: 0, to: bytes.count), meta.count >= 4,  // a FullBox
            let iloc = box("iloc", in: bytes, from: meta.lowerBound + 4, to: meta.upperBound)
        else { return nil }
        let idat = box("idat", in: bytes, from: meta.lowerBound + 4, to: meta.upperBound) ?? 0..<0
        var reader = Reader(bytes: bytes, at: iloc.lowerBound, end: iloc.upperBound)
        guard let version = reader.uint(1), version <= 2, reader.skip(3), let sizes = reader.uint(1), let more = reader.uint(1) else { return nil }
        let (offsetSize, lengthSize, baseSize) = (sizes >> 4, sizes & 15, more >> 4)
        let indexSize = version >= 1 ? more & 15 : 0
        guard [offsetSize, lengthSize, baseSize, indexSize].allSatisfy({ [0, 4, 8].contains($0) }), let items = reader.uint(version < 2 ? 2 : 4) else {
            return nil
        }
        var claimed = 0
        var first: [Int: Range<Int>] = [:]
        for _ in 0..<items {
            guard let item = reader.uint(version < 2 ? 2 : 4) else { return nil }
            var method = 0
            if version >= 1 {
                guard let word = reader.uint(2) else { return nil }
                method = word & 15
            }
            guard reader.skip(2), let base = reader.uint(baseSize), let extents = reader.uint(2) else { return nil }  // data_reference_index
            let (origin, source) = method == 1 ? (idat.lowerBound, idat.count) : (0, bytes.count)
            for extent in 0..<extents {
                guard reader.skip(indexSize), let offset = reader.uint(offsetSize), let length = reader.uint(lengthSize) else { return nil }
                let start = base > Int.max - offset ? Int.max : base + offset
                // What lies past the end is libheif's to call truncated; what is there counts once for each extent.
                let available = max(0, source - start)
                let added = length > 0 ? min(length, available) : available
                claimed = claimed > Int.max - added ? Int.max : claimed + added
                if extent == 0, method <= 1, available > 0 { first[item] = (origin + start)..<(origin + start + added) }
            }
        }
        return (claimed, first)
    }

    /// Refuses a file whose items claim more than twice its size (and 64 KiB), and one with an HEVC image (a grid's
    /// tile too) whose bitstream is larger than its declared size (`codedSizeLie`).
    static func check(_ bytes: [UInt8]) throws(PhotoPrepError) {
        // The boxes read once for all three checks.
        let located = locations(bytes)
        if let claimed = located?.claimed, claimed > 2 * bytes.count + (64 << 10) {
            throw PhotoPrepError(
                .limits, .tooLarge,
                "its items claim \(claimed > 1 << 40 ? "over a terabyte" : MemoryEstimate.megabytes(claimed)) of data in a file of \(bytes.count) bytes: the same bytes named again and again (a file stores each item's data once)")
        }
        let sizes = properties(bytes, located: located)
        if let lie = codedSizeLie(sizes) {
            throw PhotoPrepError(
                .limits, .tooLarge,
                "image item \(lie.item) is coded as \(lie.coded.width) × \(lie.coded.height) pixels where its header (ispe) says \(lie.declared.width) × \(lie.declared.height)")
        }
        if let lie = gridLie(bytes, located: located, sizes: sizes) { throw PhotoPrepError(.limits, .tooLarge, lie) }
        if let loop = derivationLoop(bytes) { throw PhotoPrepError(.decode, .corrupt, loop) }
    }

    /// How deep images may be made of images: a grid of tiles is 1, an `iden` (or overlay) of a grid 2.
    static let maxDerivationDepth = 4

    /// What is wrong with the way the file's images are made of one another, if anything: an image that is, through
    /// `dimg` (a grid's tiles, an `iden`'s or an overlay's input) or `auxl` (its alpha or depth image) references, made of
    /// itself — libheif follows such a loop without end (a 1 × 1 grid that is its own tile: thousands of threads, then a
    /// crash) — or made through more than `maxDerivationDepth` levels.
    static func derivationLoop(_ bytes: [UInt8]) -> String? {
        guard let meta = box("meta", in: bytes, from: 0, to: bytes.count), meta.count >= 4,
            let iref = box("iref", in: bytes, from: meta.lowerBound + 4, to: meta.upperBound)
        else { return nil }
        // What decoding each item needs: a derived image its inputs, an image its auxiliary images.
        var needs = references(bytes, iref: iref, type: "dimg")
        for (auxiliary, masters) in references(bytes, iref: iref, type: "auxl") {
            for master in masters { needs[master, default: []].append(auxiliary) }
        }
        // Depth-first, each item's depth (the levels of images below it) kept once known: linear in the references, and
        // never deeper than the limit (a chain of 100,000 `iden` items is refused at its fifth level, not walked).
        var depth: [Int: Int] = [:]
        var onPath: Set<Int> = []
        func visit(_ item: Int, level: Int) -> String? {
            if depth[item] != nil { return nil }
            guard level <= maxDerivationDepth else { return "" }  // too deep: said of the item the walk started from
            guard onPath.insert(item).inserted else { return "image item \(item) is made of itself (its references loop back to it)" }
            var deepest = 0
            for input in needs[item] ?? [] {
                if let problem = visit(input, level: level + 1) { return problem }
                deepest = max(deepest, depth[input]! + 1)
            }
            onPath.remove(item)
            depth[item] = deepest
            return level + deepest > maxDerivationDepth ? "" : nil
        }
        for item in needs.keys.sorted() {
            guard let problem = visit(item, level: 0) else { continue }
            return problem.isEmpty ? "image item \(item) is made of images made of images more than \(maxDerivationDepth) levels deep" : problem
        }
        return nil
    }

    /// What is wrong with a grid that would have libheif decode far more than it declares: its canvas (the grid's own
    /// output size, which libheif allocates) larger than its `ispe` — a grid declared 64 × 64 over a 16384 × 16320
    /// canvas of 64-pixel tiles held 1.6 GB —, or its tiles, each counted as often as it is named, covering more than
    /// twice the canvas (and a megapixel): a real grid's tiles cover it once, the last row and column overhanging.
    static func gridLie(_ bytes: [UInt8]) -> String? {
        let located = locations(bytes)
        return gridLie(bytes, located: located, sizes: properties(bytes, located: located))
    }

    private static func gridLie(_ bytes: [UInt8], located: (claimed: Int, first: [Int: Range<Int>])?, sizes: [Int: Sizes]) -> String? {
        guard let meta = box("meta", in: bytes, from: 0, to: bytes.count), meta.count >= 4,
            let iinf = box("iinf", in: bytes, from: meta.lowerBound + 4, to: meta.upperBound)
        else { return nil }
        let grids = itemTypes(bytes, iinf: iinf).filter { $0.value == "grid" }.keys.sorted()
        guard !grids.isEmpty, let located else { return nil }
        let tiles = box("iref", in: bytes, from: meta.lowerBound + 4, to: meta.upperBound).map { references(bytes, iref: $0, type: "dimg") } ?? [:]
        for grid in grids {
            guard let data = located.first[grid], data.count >= 8 else { continue }
            var reader = Reader(bytes: bytes, at: data.lowerBound, end: data.upperBound)
            guard reader.skip(1), let flags = reader.uint(1), reader.skip(2), let width = reader.uint(flags & 1 == 1 ? 4 : 2),
                let height = reader.uint(flags & 1 == 1 ? 4 : 2)
            else { continue }
            if let declared = sizes[grid]?.declared, width > declared.width || height > declared.height {
                return "grid item \(grid) makes a canvas of \(width) × \(height) pixels where its header (ispe) says \(declared.width) × \(declared.height)"
            }
            var covered = 0
            for tile in tiles[grid] ?? [] {
                guard let size = sizes[tile]?.coded ?? sizes[tile]?.declared else { continue }
                let area = size.width.multipliedReportingOverflow(by: size.height)
                covered = area.overflow || covered > Int.max - area.partialValue ? Int.max : covered + area.partialValue
            }
            // Both sizes are 32-bit fields (`flags` 1): their product is counted wide, saturating (it trapped).
            let canvas = width.multipliedReportingOverflow(by: height)
            if !canvas.overflow, covered / 2 > canvas.partialValue + (1 << 20) {
                return "grid item \(grid) names \((tiles[grid] ?? []).count) tiles of \(covered) pixels in all for a canvas of \(width) × \(height)"
            }
        }
        return nil
    }

    /// Each item's type (`infe` version 2 and 3), by item id.
    private static func itemTypes(_ bytes: [UInt8], iinf: Range<Int>) -> [Int: String] {
        guard iinf.count >= 6 else { return [:] }
        let start = iinf.lowerBound + 4 + (bytes[iinf.lowerBound] == 0 ? 2 : 4)  // FullBox, entry_count
        var types: [Int: String] = [:]
        for entry in children(in: bytes, from: start, to: iinf.upperBound) where entry.type == "infe" {
            var reader = Reader(bytes: bytes, at: entry.payload.lowerBound, end: entry.payload.upperBound)
            guard let version = reader.uint(1), version >= 2, reader.skip(3), let item = reader.uint(version == 2 ? 2 : 4), reader.skip(2),
                reader.at + 4 <= reader.end
            else { continue }
            types[item] = String(decoding: bytes[reader.at..<(reader.at + 4)], as: UTF8.self)
        }
        return types
    }

    /// The references of `type` in `iref`: from each item, the items it names, in order and as often as named.
    private static func references(_ bytes: [UInt8], iref: Range<Int>, type: String) -> [Int: [Int]] {
        guard iref.count >= 4 else { return [:] }
        let wide = bytes[iref.lowerBound] == 1
        var found: [Int: [Int]] = [:]
        for reference in children(in: bytes, from: iref.lowerBound + 4, to: iref.upperBound) where reference.type == type {
            var reader = Reader(bytes: bytes, at: reference.payload.lowerBound, end: reference.payload.upperBound)
            guard let from = reader.uint(wide ? 4 : 2), let count = reader.uint(2) else { continue }
            for _ in 0..<count {
                guard let to = reader.uint(wide ? 4 : 2) else { break }
                found[from, default: []].append(to)
            }
        }
        return found
    }

    /// The first HEVC- or AV1-coded item whose bitstream — the picture size of its `hvcC`'s sequence parameter set, less its
    /// conformance window, or the largest frame of its `av1C`'s sequence header — is wider or taller than its `ispe`. libheif sizes everything by `ispe` and the decoder by
    /// the bitstream: a tile declared 64 × 64 over 16384 × 16384 coded pixels was decoded whole (1.6 GB; a grid naming
    /// such tiles took minutes) before any size could be compared.
    static func codedSizeLie(_ bytes: [UInt8]) -> (item: Int, coded: (width: Int, height: Int), declared: (width: Int, height: Int))? {
        codedSizeLie(properties(bytes, located: locations(bytes)))
    }

    private static func codedSizeLie(_ sizes: [Int: Sizes]) -> (item: Int, coded: (width: Int, height: Int), declared: (width: Int, height: Int))? {
        for (item, size) in sizes.sorted(by: { $0.key < $1.key }) {
            if let coded = size.coded, let declared = size.declared, coded.width > declared.width || coded.height > declared.height {
                return (item, coded, declared)
            }
        }
        return nil
    }

    /// Each item's declared size (its `ispe`) and, for an HEVC or AV1 image, its coded size (`HEVCParameters`,
    /// `AV1Parameters`: the largest frame its sequence header allows), through `ipma`.
    private typealias Sizes = (declared: (width: Int, height: Int)?, coded: (width: Int, height: Int)?)

    private static func properties(_ bytes: [UInt8], located: (claimed: Int, first: [Int: Range<Int>])?) -> [Int: Sizes] {
        guard let meta = box("meta", in: bytes, from: 0, to: bytes.count), meta.count >= 4,
            let iprp = box("iprp", in: bytes, from: meta.lowerBound + 4, to: meta.upperBound),
            let ipco = box("ipco", in: bytes, from: iprp.lowerBound, to: iprp.upperBound),
            let ipma = box("ipma", in: bytes, from: iprp.lowerBound, to: iprp.upperBound)
        else { return [:] }
        let properties = children(in: bytes, from: ipco.lowerBound, to: ipco.upperBound)
        var found: [Int: Sizes] = [:]
        var reader = Reader(bytes: bytes, at: ipma.lowerBound, end: ipma.upperBound)
        guard let version = reader.uint(1), let flags = reader.uint(3), let entries = reader.uint(4) else { return [:] }
        for _ in 0..<entries {
            guard let item = reader.uint(version < 1 ? 2 : 4), let associations = reader.uint(1) else { return found }
            var sizes: Sizes = (nil, nil)
            for _ in 0..<associations {
                guard let entry = reader.uint(flags & 1 == 1 ? 2 : 1) else { return found }
                let index = entry & (flags & 1 == 1 ? 0x7FFF : 0x7F)  // 1-based; the top bit says "essential"
                guard index >= 1, index <= properties.count else { continue }
                let property = properties[index - 1]
                if property.type == "hvcC" { sizes.coded = HEVCParameters.pictureSize(hvcC: bytes[property.payload]) }
                if property.type == "av1C" {
                    sizes.coded = AV1Parameters.maximumFrameSize(av1C: bytes[property.payload])
                        ?? located?.first[item].flatMap { AV1Parameters.maximumFrameSize(obus: bytes[$0]) }
                }
                if property.type == "ispe", property.payload.count >= 12 {
                    var size = Reader(bytes: bytes, at: property.payload.lowerBound + 4, end: property.payload.upperBound)
                    if let width = size.uint(4), let height = size.uint(4) { sizes.declared = (width, height) }
                }
            }
            found[item] = sizes
        }
        return found
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
        private(set) var at: Int
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
