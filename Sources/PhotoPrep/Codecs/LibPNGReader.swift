internal import CPNG

/// libpng's simplified read API (`png_image_begin_read_from_memory` / `png_image_finish_read`).
/// The `png_image` control structure is freed on every path (`png_image_free`).
enum LibPNGReader {
    /// Decodes the first (default) image of a PNG into 8-bit sRGB grey or RGB, compositing any alpha
    /// onto `background`. 16-bit samples are treated as sRGB-encoded (`PNG_IMAGE_FLAG_16BIT_sRGB`).
    static func decode(
        _ png: [UInt8], grey: Bool, background: RGBColor, maxPixels: Int
    ) throws(PhotoPrepError) -> (image: PixelImage, warning: String?) {
        try png.withUnsafeBufferPointer { (source) throws(PhotoPrepError) in
            // libpng keeps reading from `source` until png_image_finish_read: both calls stay in this scope.
            var control = png_image()
            control.version = UInt32(PNG_IMAGE_VERSION)
            defer { png_image_free(&control) }

            guard png_image_begin_read_from_memory(&control, source.baseAddress, source.count) != 0 else {
                throw PhotoPrepError(.decode, .corrupt, "libpng: \(message(of: &control))")
            }
            let width = Int(control.width), height = Int(control.height)
            guard width <= maxPixels / max(1, height) else {
                throw PhotoPrepError.tooLarge(width: width, height: height, limit: maxPixels)
            }
            control.format = grey ? UInt32(PNG_FORMAT_GRAY) : UInt32(PNG_FORMAT_RGB)
            control.flags |= UInt32(PNG_IMAGE_FLAG_16BIT_sRGB)
            let channels = grey ? 1 : 3
            var colour = png_color(red: background.red, green: background.green, blue: background.blue)
            var finished: Int32 = 0
            let pixels = [UInt8](unsafeUninitializedCapacity: width * height * channels) { out, count in
                finished = png_image_finish_read(&control, &colour, out.baseAddress, 0, nil)
                count = out.count
            }
            guard finished != 0 else {
                throw PhotoPrepError(.decode, .corrupt, "libpng: \(message(of: &control))")
            }
            let warned = control.warning_or_error & UInt32(PNG_IMAGE_WARNING) != 0
            return (
                PixelImage(width: width, height: height, channels: channels, pixels: pixels),
                warned ? "libpng: \(message(of: &control))" : nil
            )
        }
    }

    private static func message(of control: inout png_image) -> String {
        String(cString: photoprep_png_message(&control))
    }

    /// Inflates a zlib stream (the payload of an iCCP chunk), refusing results above `limit` bytes.
    static func inflate(_ compressed: ArraySlice<UInt8>, limit: Int = 16 << 20) -> [UInt8]? {
        var capacity = 1 << 16
        while capacity <= limit {
            var written = -1
            let out = [UInt8](unsafeUninitializedCapacity: capacity) { out, count in
                written = compressed.withUnsafeBufferPointer {
                    photoprep_inflate($0.baseAddress, $0.count, out.baseAddress, capacity)
                }
                count = max(written, 0)
            }
            if written >= 0 { return out }
            capacity *= 4
        }
        return nil
    }
}
