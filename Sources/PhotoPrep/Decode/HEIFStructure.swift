/// What a HEIF file (HEIC or AVIF) declares about its primary image, read by libheif from the boxes
/// without decoding a pixel.
struct HEIFStructure {
    /// The size as coded (`ispe`), before the container's rotation, mirroring and crop.
    var codedWidth: Int
    var codedHeight: Int
    var bitDepth: Int
    var hasAlpha: Bool
    /// Depth maps, thumbnails and other top-level images beside the primary: never decoded.
    var depthImages: Int
    var thumbnails: Int
    var topLevelImages: Int
    /// The TIFF structure of the primary image's EXIF block (after its 4-byte header offset).
    var exif: [UInt8]?
    var hasXMP: Bool
    /// The ICC profile of a `colr` box of type `prof` or `rICC`.
    var iccProfile: [UInt8]?
    var colorDescription: ColorDescription?

    /// A `colr` box of type `nclx`: ITU-T H.273 code points and the primaries' CIE xy chromaticities.
    struct ColorDescription {
        var primaries: Int
        var transfer: Int
        var matrix: Int
        var fullRange: Bool
        var red: (Double, Double)
        var green: (Double, Double)
        var blue: (Double, Double)
        var white: (Double, Double)

        /// sRGB's primaries with the sRGB tone curve, or unspecified: what a JPEG without a profile means.
        var isSRGB: Bool { [1, 2].contains(primaries) && [2, 13].contains(transfer) }

        /// The ICC profile that says the same as this description, so that the JPEG shows the colours the
        /// HEIF meant (Display P3 stays Display P3): nil for sRGB, and for transfers no ICC tone curve
        /// expresses (PQ, HLG), which `warning` names.
        var iccProfile: [UInt8]? {
            guard !isSRGB, let (type, parameters) = curve else { return nil }
            let name = primaries == 12 && transfer == 13 ? "Display P3" : "HEIF nclx primaries \(primaries), transfer \(transfer)"
            return LittleCMSProfile.rgb(red: red, green: green, blue: blue, white: white, curveType: type, parameters: parameters, description: name)
        }

        var warning: String? {
            guard !isSRGB, curve == nil else { return nil }
            return "the HEIF's colour description (nclx transfer \(transfer): HDR or unknown) has no ICC equivalent; its values are shown as if they were sRGB"
        }

        /// The ICC parametric curve of each H.273 transfer characteristic that has one.
        private var curve: (Int32, [Double])? {
            switch transfer {
            case 2, 13: (4, [2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045])  // sRGB (unspecified: as sRGB)
            case 1, 6, 14, 15: (4, [1 / 0.45, 1 / 1.099, 0.099 / 1.099, 1 / 4.5, 0.081])  // BT.709, 601, 2020
            case 4: (1, [2.2])
            case 5: (1, [2.8])
            case 8: (1, [1.0])  // linear
            default: nil
            }
        }
    }

    /// Reads the facts of `file`'s primary image.
    init(_ file: LibHeifFile) {
        (codedWidth, codedHeight) = file.codedSize
        bitDepth = file.bitDepth ?? 8
        hasAlpha = file.hasAlpha
        depthImages = file.depthImages
        thumbnails = file.thumbnails
        topLevelImages = file.topLevelImages
        exif = file.firstMetadata("Exif").flatMap { bytes in
            // ISO/IEC 23008-12 A.2.1: a 32-bit offset from the end of itself to the TIFF header.
            guard bytes.count >= 4 else { return nil }
            let offset = Int(bytes[0]) << 24 | Int(bytes[1]) << 16 | Int(bytes[2]) << 8 | Int(bytes[3])
            return offset >= 0 && 4 + offset < bytes.count ? Array(bytes[(4 + offset)...]) : nil
        }
        hasXMP = file.metadataContentTypes("mime").contains("application/rdf+xml")
        iccProfile = file.iccProfile
        colorDescription = file.colorDescription
    }
}
