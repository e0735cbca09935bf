internal import CJPEGWrite
#if canImport(Glibc)
import Glibc
#endif

/// Writes JPEGs with libjpeg-turbo's libjpeg API (`photoprep_jpeg_write`): the accurate integer DCT, Huffman tables
/// optimised for each image, 4:2:0 or 4:4:4 chroma, baseline or progressive.
enum JPEGWriter {
    /// How a photo is written, besides its quality.
    struct Settings: Sendable, Hashable {
        /// Full-resolution chroma (4:4:4); 4:2:0 otherwise. Grey images have no chroma.
        var fullChroma = false
        var progressive = false
    }

    /// Encodes `image` at `quality` and lends the bytes to `body` (the buffer is freed after it returns).
    static func encode<R>(
        _ image: PixelImage, quality: Int, settings: Settings, body: (UnsafeRawBufferPointer) throws(PhotoPrepError) -> R
    ) throws(PhotoPrepError) -> R {
        var out: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        var error = [CChar](repeating: 0, count: 256)
        let written = photoprep_jpeg_settings(
            quality: Int32(quality), full_chroma: settings.fullChroma ? 1 : 0, progressive: settings.progressive ? 1 : 0,
            optimize_coding: 1)
        let rc = image.pixels.withUnsafeBufferPointer { pixels in
            photoprep_jpeg_write(
                pixels.baseAddress!, Int32(image.width), Int32(image.height), Int32(image.channels), written, &out, &size,
                &error, error.count)
        }
        defer { free(out) }
        guard rc == 0, let out else {
            throw PhotoPrepError(.encode, .codecFailure, "libjpeg-turbo: \(String(cString: error))")
        }
        return try body(UnsafeRawBufferPointer(start: out, count: Int(size)))
    }
}
