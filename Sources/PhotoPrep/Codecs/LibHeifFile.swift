internal import CHeif

#if canImport(Glibc)
import Glibc
#endif

/// A HEIF file (HEIC or AVIF) opened with libheif: its context (`heif_context_alloc`,
/// `heif_context_read_from_memory_without_copy`) and primary image handle
/// (`heif_context_get_primary_image_handle`), released in `deinit`.
///
/// libheif reads the bytes in place, so a file lives only inside `LibHeifFile.open`'s body, while
/// the bytes are pinned. Opening parses the boxes only; no pixel is decoded until `decode`.
final class LibHeifFile {
    private let heif: photoprep_heif
    private let context: OpaquePointer
    private let primary: OpaquePointer

    /// libheif's functions, loaded the first time a HEIF or AVIF file is opened rather than linked: linked, its
    /// static initialisers (libde265's tables) ran in every process, 24.7 million instructions before `main`.
    private static let library: Result<photoprep_heif, PhotoPrepError> = {
        var reason = [CChar](repeating: 0, count: 512)
        guard let functions = photoprep_heif_load(&reason, reason.count) else {
            return .failure(PhotoPrepError(.decode, .unsupportedFeature, "libheif cannot be loaded: \(reason.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })"))
        }
        return .success(functions.pointee)
    }()

    /// Opens `bytes` and hands the file to `body`; a file whose items claim more bytes than it holds is refused first
    /// (`HEIFItems`).
    static func open<T>(_ bytes: [UInt8], _ body: (LibHeifFile) throws(PhotoPrepError) -> T) throws(PhotoPrepError) -> T {
        try HEIFItems.check(bytes)  // before libheif reads any item into memory
        return try bytes.withUnsafeBufferPointer { (buffer) throws(PhotoPrepError) -> T in
            let file = try LibHeifFile(buffer)
            return try withExtendedLifetime(file) { () throws(PhotoPrepError) -> T in try body(file) }
        }
    }

    private init(_ buffer: UnsafeBufferPointer<UInt8>) throws(PhotoPrepError) {
        let heif = try Self.library.get()
        guard let context = heif.heif_context_alloc() else { throw PhotoPrepError(.decode, .codecFailure, "libheif: cannot allocate a context") }
        // An image (a grid's tile too) whose declared size (`ispe`) has an edge beyond 32768 (libheif's own default;
        // panoramas stay well within it) is refused before its pixels are allocated; `maxPixels` is checked against
        // the primary image's size by the caller. (This was `maxPixels` itself, which as an edge let any tile through.)
        heif.heif_context_set_maximum_image_size_limit(context, 32768)
        var error = heif.heif_context_read_from_memory_without_copy(context, buffer.baseAddress, buffer.count, nil)
        guard error.code == heif_error_Ok else {
            // The message belongs to the context: read before it is freed.
            let failure = Self.failure(error, stage: .decode)
            heif.heif_context_free(context)
            throw failure
        }
        var handle: OpaquePointer?
        error = heif.heif_context_get_primary_image_handle(context, &handle)
        guard error.code == heif_error_Ok, let handle else {
            let failure = Self.failure(error, stage: .decode)
            heif.heif_context_free(context)
            throw failure
        }
        self.heif = heif
        self.context = context
        self.primary = handle
    }

    deinit {
        heif.heif_image_handle_release(primary)
        heif.heif_context_free(context)
    }

    // MARK: - What the headers say

    /// The primary image's size as shown: libheif has applied the container's rotation, mirroring and crop.
    var width: Int { Int(heif.heif_image_handle_get_width(primary)) }
    var height: Int { Int(heif.heif_image_handle_get_height(primary)) }
    /// The size as coded (`ispe`), before those transforms.
    var codedSize: (width: Int, height: Int) {
        (Int(heif.heif_image_handle_get_ispe_width(primary)), Int(heif.heif_image_handle_get_ispe_height(primary)))
    }
    /// Bits per luma sample (8, 10, 12), or nil when the file does not say.
    var bitDepth: Int? {
        let bits = heif.heif_image_handle_get_luma_bits_per_pixel(primary)
        return bits > 0 ? Int(bits) : nil
    }
    var hasAlpha: Bool { heif.heif_image_handle_has_alpha_channel(primary) != 0 }
    var premultipliedAlpha: Bool { heif.heif_image_handle_is_premultiplied_alpha(primary) != 0 }
    var depthImages: Int { Int(heif.heif_image_handle_get_number_of_depth_images(primary)) }
    var thumbnails: Int { Int(heif.heif_image_handle_get_number_of_thumbnails(primary)) }
    var topLevelImages: Int { Int(heif.heif_context_get_number_of_top_level_images(context)) }

    /// The ICC profile of a `colr` box of type `prof` or `rICC`.
    var iccProfile: [UInt8]? {
        let type = heif.heif_image_handle_get_color_profile_type(primary)
        guard type == heif_color_profile_type_prof || type == heif_color_profile_type_rICC else { return nil }
        let size = heif.heif_image_handle_get_raw_color_profile_size(primary)
        guard size > 0 else { return nil }
        var failed = false
        let profile = [UInt8](unsafeUninitializedCapacity: size) { out, count in
            failed = heif.heif_image_handle_get_raw_color_profile(primary, out.baseAddress).code != heif_error_Ok
            count = failed ? 0 : size
        }
        return failed ? nil : profile
    }

    /// The colour description of a `colr` box of type `nclx` (ITU-T H.273 code points, and the primaries'
    /// chromaticities libheif derives from them).
    var colorDescription: HEIFStructure.ColorDescription? {
        var nclx: UnsafeMutablePointer<heif_color_profile_nclx>?
        guard heif.heif_image_handle_get_nclx_color_profile(primary, &nclx).code == heif_error_Ok, let nclx else { return nil }
        defer { heif.heif_nclx_color_profile_free(nclx) }
        let p = nclx.pointee
        return .init(
            primaries: Int(p.color_primaries.rawValue), transfer: Int(p.transfer_characteristics.rawValue),
            matrix: Int(p.matrix_coefficients.rawValue), fullRange: p.full_range_flag != 0,
            red: (Double(p.color_primary_red_x), Double(p.color_primary_red_y)),
            green: (Double(p.color_primary_green_x), Double(p.color_primary_green_y)),
            blue: (Double(p.color_primary_blue_x), Double(p.color_primary_blue_y)),
            white: (Double(p.color_primary_white_x), Double(p.color_primary_white_y)))
    }

    /// The ids of the metadata blocks of `type` ("Exif", or "mime" for XMP).
    private func metadataIDs(_ type: String) -> [heif_item_id] {
        let count = Int(heif.heif_image_handle_get_number_of_metadata_blocks(primary, type))
        guard count > 0 else { return [] }
        var ids = [heif_item_id](repeating: 0, count: count)
        let found = Int(heif.heif_image_handle_get_list_of_metadata_block_IDs(primary, type, &ids, Int32(count)))
        return Array(ids.prefix(found))
    }

    /// The payload of the first metadata block of `type` (at most 16 MiB), copied: the others are not.
    func firstMetadata(_ type: String) -> [UInt8]? {
        guard let id = metadataIDs(type).first else { return nil }
        let size = heif.heif_image_handle_get_metadata_size(primary, id)
        guard size > 0, size <= 16 << 20 else { return nil }
        var failed = false
        let bytes = [UInt8](unsafeUninitializedCapacity: size) { out, written in
            failed = heif.heif_image_handle_get_metadata(primary, id, out.baseAddress).code != heif_error_Ok
            written = failed ? 0 : size
        }
        return failed ? nil : bytes
    }

    /// The content types of the metadata blocks of `type` (for "mime": XMP is `application/rdf+xml`).
    func metadataContentTypes(_ type: String) -> [String] {
        metadataIDs(type).map { heif.heif_image_handle_get_metadata_content_type(primary, $0).map { String(cString: $0) } ?? "" }
    }

    // MARK: - Decoding

    /// Decodes the primary image (`heif_decode_image`) — a grid's tiles on up to `threads` threads
    /// (`heif_context_set_max_decoding_threads`), the container's rotation and mirroring applied — into
    /// 8-bit RGB: deeper samples rounded, alpha composed onto `background`. Returns libheif's decoding
    /// warnings (a damaged tile is decoded as well as it can be) beside the image.
    func decode(background: RGBColor, threads: Int) throws(PhotoPrepError) -> (image: PixelImage, warnings: [String]) {
        // 0 decodes the tiles on the calling thread; 1 would start one background thread for them.
        heif.heif_context_set_max_decoding_threads(context, threads > 1 ? Int32(threads) : 0)
        let deep = (bitDepth ?? 8) > 8
        let alpha = hasAlpha
        let chroma =
            switch (deep, alpha) {
            case (false, false): heif_chroma_interleaved_RGB
            case (false, true): heif_chroma_interleaved_RGBA
            case (true, false): heif_chroma_interleaved_RRGGBB_LE
            case (true, true): heif_chroma_interleaved_RRGGBBAA_LE
            }
        guard let options = heif.heif_decoding_options_alloc() else { throw PhotoPrepError(.decode, .codecFailure, "libheif: cannot allocate decoding options") }
        defer { heif.heif_decoding_options_free(options) }
        options.pointee.ignore_transformations = 0
        // Deeper samples come out as they are; the rounding to 8 bits is ours (libheif's conversion shifts).
        options.pointee.convert_hdr_to_8bit = 0
        var decoded: OpaquePointer?
        let error = heif.heif_decode_image(primary, &decoded, heif_colorspace_RGB, chroma, options)
        guard error.code == heif_error_Ok, let decoded else { throw Self.failure(error, stage: .decode) }
        defer { heif.heif_image_release(decoded) }

        let width = Int(heif.heif_image_get_primary_width(decoded)), height = Int(heif.heif_image_get_primary_height(decoded))
        // What was coded is not what the header said: libheif decodes the bitstream's size, whatever `ispe` declares
        // (a 64 × 64 declaration over a 16384 × 16384 tile decoded all of it); sized by the header, the output would be
        // the picture stretched.
        guard width == self.width, height == self.height else {
            throw PhotoPrepError(.decode, .corrupt, "the image data is \(width) × \(height) pixels where its header (ispe) says \(self.width) × \(self.height)")
        }
        var stride: Int32 = 0
        guard width > 0, height > 0, let plane = heif.heif_image_get_plane_readonly(decoded, heif_channel_interleaved, &stride) else {
            throw PhotoPrepError(.decode, .codecFailure, "libheif returned no interleaved RGB plane")
        }
        let bits = deep ? Int(heif.heif_image_get_bits_per_pixel_range(decoded, heif_channel_interleaved)) : 8
        let conversion = PixelConversion(
            channels: alpha ? 4 : 3, maximum: (1 << max(8, min(bits, 16))) - 1, premultiplied: alpha && premultipliedAlpha, background: background)
        let image = conversion.image(from: UnsafeRawPointer(plane), width: width, height: height, stride: Int(stride))
        return (image, warnings(of: decoded))
    }

    private func warnings(of image: OpaquePointer) -> [String] {
        let count = Int(heif.heif_image_get_decoding_warnings(image, 0, nil, 0))
        guard count > 0 else { return [] }
        var found = [heif_error](repeating: heif_error(), count: min(count, 8))
        let filled = Int(heif.heif_image_get_decoding_warnings(image, 0, &found, Int32(found.count)))
        return found.prefix(filled).map { "libheif: \($0.message.map { String(cString: $0) } ?? "warning \($0.code.rawValue)")" }
    }

    /// libheif's error as ours: its message kept; a file cut short or damaged is `corrupt`, a codec libheif
    /// lacks an `unsupportedFeature`, a security limit `tooLarge`.
    static func failure(_ error: heif_error, stage: PhotoPrepError.Stage) -> PhotoPrepError {
        let message = "libheif: " + (error.message.map { String(cString: $0) } ?? "error \(error.code.rawValue)")
        switch error.code {
        case heif_error_Unsupported_feature, heif_error_Unsupported_filetype, heif_error_Plugin_loading_error:
            return PhotoPrepError(stage, .unsupportedFeature, message)
        case heif_error_Memory_allocation_error where error.subcode == heif_suberror_Security_limit_exceeded:
            return PhotoPrepError(.limits, .tooLarge, message)
        case heif_error_Memory_allocation_error:
            return PhotoPrepError(stage, .codecFailure, message)
        default:
            return PhotoPrepError(stage, .corrupt, message)
        }
    }
}
