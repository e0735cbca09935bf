internal import CWebP

/// libwebp's encoder (the advanced API: `WebPConfig`, `WebPPicture`, `WebPMemoryWriter`) for WebP thumbnails, and its
/// simple decoder to score what it wrote.
enum LibWebPEncoder {
    /// An RGB image (`PixelImage.rgbImage`) converted to YUV 4:2:0 once, with sharp RGB → YUV conversion (chroma edges —
    /// red on green, text — blur less at the same size), for the encodes of a quality search: libwebp encodes a picture
    /// that already holds YUV as it is, without converting it again, and leaves it unchanged. Freed with the value.
    struct Picture: ~Copyable {
        private let picture: WebPPicture

        init(_ image: PixelImage) throws(PhotoPrepError) {
            precondition(image.channels == 3, "libwebp imports RGB")
            var picture = WebPPicture()
            guard WebPPictureInit(&picture) != 0 else { throw PhotoPrepError(.encode, .codecFailure, "libwebp: version mismatch") }
            picture.use_argb = 1
            picture.width = Int32(image.width)
            picture.height = Int32(image.height)
            let imported = image.pixels.withUnsafeBufferPointer { WebPPictureImportRGB(&picture, $0.baseAddress, Int32(image.width * 3)) }
            guard imported != 0, WebPPictureSharpARGBToYUVA(&picture) != 0 else {
                WebPPictureFree(&picture)
                throw PhotoPrepError(.encode, .codecFailure, "libwebp: cannot import the pixels (out of memory)")
            }
            self.picture = picture
        }

        deinit {
            var picture = picture
            WebPPictureFree(&picture)
        }

        /// The picture as lossy WebP at `quality` (0–100), libwebp's default effort (method 4). The writer's memory is
        /// freed before it returns.
        func encode(quality: Int) throws(PhotoPrepError) -> [UInt8] {
            var config = WebPConfig()
            guard WebPConfigInit(&config) != 0 else { throw PhotoPrepError(.encode, .codecFailure, "libwebp: version mismatch") }
            config.quality = Float(quality)
            config.method = 4
            config.use_sharp_yuv = 1
            var picture = picture  // the same planes: this call's writer and statistics are set on the copy
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

    /// A WebP this process wrote, decoded to RGB (nil when it does not decode to `width` × `height`).
    static func decodeRGB(_ bytes: [UInt8], width: Int, height: Int) -> PixelImage? {
        var w: Int32 = 0, h: Int32 = 0
        guard let decoded = bytes.withUnsafeBufferPointer({ WebPDecodeRGB($0.baseAddress, $0.count, &w, &h) }) else { return nil }
        defer { WebPFree(decoded) }
        guard Int(w) == width, Int(h) == height else { return nil }
        return PixelImage(width: width, height: height, channels: 3, pixels: Array(UnsafeBufferPointer(start: decoded, count: width * height * 3)))
    }
}
