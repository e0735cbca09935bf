/// Small copies of the normalised photo for lists and avatars, made from its pixels — upright, already
/// resized — so a photo is decoded once for itself and its thumbnails. Each long edge in
/// `PrepareOptions.thumbnails` (never larger than the photo), the largest first and each smaller one from
/// the one before (`Resizer.thumbnail` from a larger copy, not from the original: a fraction of the work), encoded at
/// `thumbnailQuality` with the photo's colour profile.
enum Thumbnails {
    static func make(from image: PixelImage, edges: [Int], quality: Int, extraSegments: [UInt8]) throws(PhotoPrepError) -> [Thumbnail] {
        guard !edges.isEmpty else { return [] }
        let compressor = try TurboJPEGCompressor()
        var made: [Thumbnail] = []
        var source = image
        for edge in Set(edges).sorted(by: >) {
            let size = PrepareOptions(maxEdge: edge, maxBytes: .max).outputSize(width: source.width, height: source.height)
            let pixels = size == (source.width, source.height) ? source : Resizer.thumbnail(source, width: size.width, height: size.height)
            let jpeg = try compressor.encode(pixels, quality: quality) { JPEGSegments.inserting(extraSegments, into: $0) }
            made.append(Thumbnail(edge: edge, width: pixels.width, height: pixels.height, jpeg: jpeg))
            source = pixels
        }
        return made.reversed()
    }
}
