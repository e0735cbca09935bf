/// What the decode stage learns from the headers before decoding any pixel.
struct SourceInfo {
    var format: ImageFormat
    var width: Int
    var height: Int
    var exif: EXIFSummary
    var iccProfile: [UInt8]?
    var warnings: [String]
    /// JPEG only: the parsed marker structure.
    var jpeg: JPEGStructure?
    /// PNG only: the parsed chunk structure.
    var png: PNGStructure?
    /// HEIF and AVIF only: what libheif read from the boxes.
    var heif: HEIFStructure?
    /// WebP only: the headers and chunks.
    var webp: WebPStructure?

    /// How the decoded pixels must be turned to appear upright: the EXIF orientation for JPEG, PNG and WebP
    /// (as browsers show them). HEIF's decoder already applied the container's own rotation and mirroring
    /// (`irot`, `imir`), which is what a phone, a browser and libvips show: an EXIF orientation in the same
    /// file (iPhones write both) must not turn the image again.
    var orientation: Orientation {
        switch format {
        case .heif, .avif: .up
        case .jpeg, .png, .webp: exif.orientation ?? .up
        }
    }

    /// Sniffs the format and reads the headers, refusing unsupported features and images over
    /// `maxPixels` before any pixel memory is allocated.
    static func read(_ bytes: [UInt8], maxPixels: Int, checkFeatures: Bool = true) throws(PhotoPrepError) -> SourceInfo {
        let format = try ImageFormat.sniff(bytes)
        let info: SourceInfo
        switch format {
        case .jpeg:
            let structure = try JPEGStructure.parse(bytes)
            info = SourceInfo(
                format: .jpeg, width: structure.width, height: structure.height,
                exif: EXIFSummary.parse(structure.exif), iccProfile: structure.iccProfile,
                warnings: structure.warnings, jpeg: structure)
            if checkFeatures && structure.precision != 8 {
                throw PhotoPrepError(.decode, .unsupportedFeature, "\(structure.precision)-bit JPEG is not supported (only 8-bit samples)")
            }
            if checkFeatures && structure.coding == .lossless {
                throw PhotoPrepError(.decode, .unsupportedFeature, "lossless JPEG (SOF3, SOF7, SOF11 or SOF15) is not supported")
            }
            guard structure.width > 0, structure.height > 0 else {
                throw PhotoPrepError(.decode, .corrupt, "the JPEG frame header declares a zero dimension")
            }
        case .png:
            let structure = try PNGStructure.parse(bytes)
            info = SourceInfo(
                format: .png, width: structure.width, height: structure.height,
                exif: EXIFSummary.parse(structure.exif), iccProfile: structure.iccProfile,
                warnings: structure.warnings, png: structure)
        case .heif, .avif:
            let (structure, width, height) = try LibHeifFile.open(bytes) { file in
                (HEIFStructure(file), file.width, file.height)
            }
            // An ICC profile is kept as JPEG's is; a colour description (nclx) becomes the ICC profile that says the same.
            let description = structure.colorDescription
            info = SourceInfo(
                format: format, width: width, height: height, exif: EXIFSummary.parse(structure.exif?[...]),
                iccProfile: structure.iccProfile ?? description?.iccProfile,
                warnings: structure.iccProfile == nil ? description?.warning.map { [$0] } ?? [] : [], heif: structure)
            guard width > 0, height > 0 else {
                throw PhotoPrepError(.decode, .corrupt, "the HEIF primary image declares a zero dimension")
            }
        case .webp:
            let structure = try LibWebPDecoder.structure(bytes)
            info = SourceInfo(
                format: .webp, width: structure.width, height: structure.height, exif: EXIFSummary.parse(structure.exif?[...]),
                iccProfile: structure.iccProfile, warnings: [], webp: structure)
        }
        guard info.width <= maxPixels / info.height else {
            throw PhotoPrepError.tooLarge(width: info.width, height: info.height, limit: maxPixels)
        }
        return info
    }
}
