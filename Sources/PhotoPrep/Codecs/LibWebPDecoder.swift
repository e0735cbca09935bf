internal import CWebP

/// libwebp's decoder (`WebPGetFeatures`, `WebPDecode` with scaling) and its demuxer (`WebPDemux` for the
/// EXIF and ICCP chunks, `WebPAnimDecoder` for an animation's first frame): the only code calling libwebp.
/// Every handle is freed before the call that made it returns.
enum LibWebPDecoder {
    /// What the bitstream and the container declare (`WebPGetFeatures`, and the chunks the demuxer lists).
    static func structure(_ bytes: [UInt8]) throws(PhotoPrepError) -> WebPStructure {
        var features = WebPBitstreamFeatures()
        let status = bytes.withUnsafeBufferPointer { WebPGetFeatures($0.baseAddress, $0.count, &features) }
        guard status == VP8_STATUS_OK else { throw failure(status, "reading the header") }
        var structure = WebPStructure(
            width: Int(features.width), height: Int(features.height), hasAlpha: features.has_alpha != 0,
            animated: features.has_animation != 0, coding: features.format == 2 ? "lossless" : features.format == 1 ? "lossy" : "lossy or lossless frames")
        bytes.withUnsafeBufferPointer { buffer in
            // A file cut short still has its header: the demuxer then refuses, and the chunks are unknown.
            guard let demuxer = photoprep_webp_demux(buffer.baseAddress, buffer.count) else { return }
            defer { WebPDemuxDelete(demuxer) }
            func chunk(_ name: String) -> [UInt8]? {
                var iterator = WebPChunkIterator()
                guard WebPDemuxGetChunk(demuxer, name, 1, &iterator) != 0 else { return nil }
                defer { WebPDemuxReleaseChunkIterator(&iterator) }
                return Array(UnsafeBufferPointer(start: iterator.chunk.bytes, count: iterator.chunk.size))
            }
            structure.exif = chunk("EXIF").map { exif in
                // Some writers keep JPEG's "Exif\0\0" before the TIFF header.
                exif.starts(with: Array("Exif\0\0".utf8)) ? Array(exif.dropFirst(6)) : exif
            }
            structure.iccProfile = chunk("ICCP")
            structure.hasXMP = chunk("XMP ") != nil
            structure.frames = Int(WebPDemuxGetI(demuxer, WEBP_FF_FRAME_COUNT))
        }
        return structure
    }

    /// Decodes the image — an animation's first frame, composed on its canvas — into 8-bit RGB, alpha
    /// composed onto `background`. A still image is scaled while it decodes (libwebp's area-averaging
    /// rescaler) to ⌈width / `scale`⌉ × ⌈height / `scale`⌉, as TurboJPEG's shrink-on-load gives.
    static func decode(_ bytes: [UInt8], structure: WebPStructure, scale: Int, background: RGBColor) throws(PhotoPrepError) -> PixelImage {
        if structure.animated { return try firstFrame(bytes, structure: structure, background: background) }
        var config = WebPDecoderConfig()
        guard WebPInitDecoderConfig(&config) != 0 else { throw PhotoPrepError(.decode, .codecFailure, "libwebp: version mismatch") }
        let width = (structure.width + scale - 1) / scale, height = (structure.height + scale - 1) / scale
        if scale > 1 {
            config.options.use_scaling = 1
            config.options.scaled_width = Int32(width)
            config.options.scaled_height = Int32(height)
        }
        let channels = structure.hasAlpha ? 4 : 3
        config.output.colorspace = structure.hasAlpha ? MODE_RGBA : MODE_RGB
        config.output.is_external_memory = 1
        var status = VP8_STATUS_OK
        let decoded = [UInt8](unsafeUninitializedCapacity: width * height * channels) { out, count in
            config.output.u.RGBA = WebPRGBABuffer(rgba: out.baseAddress, stride: Int32(width * channels), size: out.count)
            status = bytes.withUnsafeBufferPointer { WebPDecode($0.baseAddress, $0.count, &config) }
            count = status == VP8_STATUS_OK ? out.count : 0
        }
        WebPFreeDecBuffer(&config.output)
        guard status == VP8_STATUS_OK else { throw failure(status, "decoding") }
        if !structure.hasAlpha { return PixelImage(width: width, height: height, channels: 3, pixels: decoded) }
        return decoded.withUnsafeBytes { raw in
            PixelConversion(channels: 4, maximum: 255, background: background)
                .image(from: raw.baseAddress!, width: width, height: height, stride: width * 4)
        }
    }

    /// The first frame of an animation (`WebPAnimDecoderGetNext`), as the full canvas.
    private static func firstFrame(_ bytes: [UInt8], structure: WebPStructure, background: RGBColor) throws(PhotoPrepError) -> PixelImage {
        try bytes.withUnsafeBufferPointer { (buffer) throws(PhotoPrepError) -> PixelImage in
            guard let decoder = photoprep_webp_anim_decoder(buffer.baseAddress, buffer.count, MODE_RGBA) else {
                throw PhotoPrepError(.decode, .corrupt, "libwebp: the animation cannot be read")
            }
            defer { WebPAnimDecoderDelete(decoder) }
            var info = WebPAnimInfo()
            var frame: UnsafeMutablePointer<UInt8>?
            var timestamp: Int32 = 0
            guard WebPAnimDecoderGetInfo(decoder, &info) != 0, WebPAnimDecoderGetNext(decoder, &frame, &timestamp) != 0, let frame else {
                throw PhotoPrepError(.decode, .corrupt, "libwebp: the animation's first frame cannot be decoded")
            }
            let width = Int(info.canvas_width), height = Int(info.canvas_height)
            return PixelConversion(channels: 4, maximum: 255, background: background)
                .image(from: UnsafeRawPointer(frame), width: width, height: height, stride: width * 4)
        }
    }

    private static func failure(_ status: VP8StatusCode, _ doing: String) -> PhotoPrepError {
        switch status {
        case VP8_STATUS_NOT_ENOUGH_DATA:
            PhotoPrepError(.decode, .corrupt, "libwebp: not enough data \(doing) (the file is truncated)")
        case VP8_STATUS_BITSTREAM_ERROR:
            PhotoPrepError(.decode, .corrupt, "libwebp: bitstream error \(doing)")
        case VP8_STATUS_UNSUPPORTED_FEATURE:
            PhotoPrepError(.decode, .unsupportedFeature, "libwebp: unsupported feature \(doing)")
        case VP8_STATUS_OUT_OF_MEMORY:
            PhotoPrepError(.decode, .codecFailure, "libwebp: out of memory \(doing)")
        default:
            PhotoPrepError(.decode, .codecFailure, "libwebp: status \(status.rawValue) \(doing)")
        }
    }
}
