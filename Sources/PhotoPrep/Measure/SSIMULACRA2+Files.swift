extension SSIMULACRA2 {
    /// The score of the photo in the file at `distorted` against the one at `reference` (any format `prepare` reads, each
    /// decoded whole, turned upright by its EXIF orientation, transparency flattened onto white). Errors name the file.
    public static func score(reference: String, distorted: String) throws(PhotoPrepError) -> Double {
        let first = try uprightPixels(reference), second = try uprightPixels(distorted)
        guard first.width == second.width, first.height == second.height else {
            throw PhotoPrepError(
                .decode, .sizeMismatch,
                "is \(second.width) × \(second.height) and the reference \(first.width) × \(first.height): scores compare images of one size",
                file: distorted)
        }
        return score(first, second)
    }

    /// The photo in the file at `path`, decoded at full size and upright.
    static func uprightPixels(_ path: String) throws(PhotoPrepError) -> PixelImage {
        do {
            let bytes = try FileBytes.read(path)
            var options = PrepareOptions(maxEdge: .max, maxBytes: .max)
            options.maxMemory = .max
            let info = try SourceInfo.read(bytes, maxPixels: options.maxPixels)
            let image = try Decoder.decode(bytes, info: info, target: (info.width, info.height), options: options).image
            return info.orientation.apply(to: image)
        } catch {
            throw error.naming(path)
        }
    }
}
