internal import CWebP

/// libwebp's encoder (the advanced API: `WebPConfig`, `WebPPicture`, `WebPMemoryWriter`) for WebP thumbnails, and its
/// simple decoder to score what it wrote. The picture and the writer's memory are freed before each call returns.
enum LibWebPEncoder {
    /// `image` (RGB: `PixelImage.rgbImage`) as lossy WebP at `quality` (0–100), libwebp's default effort (method 4), with sharp RGB →
    /// YUV conversion: chroma edges (red on green, text) blur less at the same size.
    static func encode(_ image: PixelImage, quality: Int) throws(PhotoPrepError) -> [UInt8] {
        try bitstream(image, quality: quality)
    }

    /// `webp` in a container that carries `iccProfile` (libwebpmux), for pixels in that colour space.
    static func withProfile(_ webp: [UInt8], _ iccProfile: [UInt8]) throws(PhotoPrepError) -> [UInt8] {
        var out = WebPData()
        let ok = webp.withUnsafeBufferPointer { image in
            iccProfile.withUnsafeBufferPointer { icc in photoprep_webp_with_icc(image.baseAddress, image.count, icc.baseAddress, icc.count, &out) }
        }
        defer { WebPDataClear(&out) }
        guard ok != 0 else { throw PhotoPrepError(.encode, .codecFailure, "libwebpmux: cannot add the colour profile") }
        return Array(UnsafeBufferPointer(start: out.bytes, count: out.size))
    }

    private static func bitstream(_ image: PixelImage, quality: Int) throws(PhotoPrepError) -> [UInt8] {
        var config = WebPConfig()
        guard WebPConfigInit(&config) != 0 else { throw PhotoPrepError(.encode, .codecFailure, "libwebp: version mismatch") }
        config.quality = Float(quality)
        config.method = 4
        config.use_sharp_yuv = 1
        var picture = WebPPicture()
        guard WebPPictureInit(&picture) != 0 else { throw PhotoPrepError(.encode, .codecFailure, "libwebp: version mismatch") }
        defer { WebPPictureFree(&picture) }
        picture.use_argb = 1
        picture.width = Int32(image.width)
        picture.height = Int32(image.height)
        precondition(image.channels == 3, "libwebp imports RGB")
        let imported = image.pixels.withUnsafeBufferPointer { WebPPictureImportRGB(&picture, $0.baseAddress, Int32(image.width * 3)) }
        guard imported != 0 else { throw PhotoPrepError(.encode, .codecFailure, "libwebp: cannot import the pixels (out of memory)") }
        var writer = WebPMemoryWriter()
        WebPMemoryWriterInit(&writer)
        defer { WebPMemoryWriterClear(&writer) }
        picture.writer = WebPMemoryWrite
        let encoded = withUnsafeMutablePointer(to: &writer) { pointer in
            picture.custom_ptr = UnsafeMutableRawPointer(pointer)
            return WebPEncode(&config, &picture)
        }
        guard encoded != 0 else { throw PhotoPrepError(.encode, .codecFailure, "libwebp: encoding failed (error \(picture.error_code.rawValue))") }
        return Array(UnsafeBufferPointer(start: writer.mem, count: writer.size))
    }

    /// A WebP this process wrote, decoded to RGB (nil when it does not decode to `width` × `height`).
    static func decodeRGB(_ bytes: [UInt8], width: Int, height: Int) -> PixelImage? {
        var w: Int32 = 0, h: Int32 = 0
        guard let decoded = bytes.withUnsafeBufferPointer({ WebPDecodeRGB($0.baseAddress, $0.count, &w, &h) }) else { return nil }
        defer { WebPFree(decoded) }
        guard Int(w) == width, Int(h) == height else { return nil }
        return PixelImage(width: width, height: height, channels: 3, pixels: Array(UnsafeBufferPointer(start: decoded, count: width * height * 3)))
    }
}
