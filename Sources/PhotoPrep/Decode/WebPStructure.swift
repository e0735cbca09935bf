/// What a WebP declares, read without decoding: the VP8/VP8L/VP8X headers and the container's chunks.
struct WebPStructure {
    /// The canvas size.
    var width: Int
    var height: Int
    var hasAlpha: Bool
    var animated: Bool
    /// "lossy", "lossless", or for an animation "lossy or lossless frames" (its header does not say).
    var coding: String
    /// The TIFF structure of the EXIF chunk.
    var exif: [UInt8]?
    var iccProfile: [UInt8]?
    var hasXMP = false
    var frames = 1
}
