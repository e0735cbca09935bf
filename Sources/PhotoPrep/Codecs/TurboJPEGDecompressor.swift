internal import CTurboJPEG

/// Owns one TurboJPEG decompression handle (`tjInitDecompress`) and frees it in `deinit` (`tjDestroy`).
final class TurboJPEGDecompressor {
    private let handle: tjhandle

    init() throws(PhotoPrepError) {
        guard let handle = tjInitDecompress() else {
            throw PhotoPrepError(.decode, .codecFailure, "tjInitDecompress failed: \(String(cString: tjGetErrorStr2(nil)))")
        }
        self.handle = handle
    }

    deinit { tjDestroy(handle) }

    /// Header facts from `tjDecompressHeader3`.
    struct Header {
        var width: Int
        var height: Int
        var colorspace: Int32
    }

    func header(_ jpeg: [UInt8]) throws(PhotoPrepError) -> Header {
        var width: Int32 = 0, height: Int32 = 0, subsamp: Int32 = 0, colorspace: Int32 = 0
        let rc = jpeg.withUnsafeBufferPointer {
            tjDecompressHeader3(handle, $0.baseAddress, UInt($0.count), &width, &height, &subsamp, &colorspace)
        }
        // A warning (junk bytes between markers) is not fatal: libjpeg reads on, and the decode reports it.
        guard rc == 0 || (tjGetErrorCode(handle) == Int32(TJERR_WARNING.rawValue) && width > 0 && height > 0) else {
            throw PhotoPrepError(.decode, .corrupt, "libjpeg-turbo: \(lastError)")
        }
        return Header(width: Int(width), height: Int(height), colorspace: colorspace)
    }

    /// The output size of `tjDecompress2` at 1/`denominator` scale (TurboJPEG's `TJSCALED`).
    static func scaledSize(width: Int, height: Int, denominator: Int) -> (width: Int, height: Int) {
        let factor = tjscalingfactor(num: 1, denom: Int32(denominator))
        return (Int(photoprep_tj_scaled(Int32(width), factor)), Int(photoprep_tj_scaled(Int32(height), factor)))
    }

    /// Decodes at 1/`denominator` scale into packed pixels (`tjDecompress2`).
    /// Returns the pixels and libjpeg-turbo's warning, if it only warned (for example, truncated data).
    func decode(
        _ jpeg: [UInt8], width: Int, height: Int, denominator: Int, pixelFormat: TJPF, strict: Bool
    ) throws(PhotoPrepError) -> (pixels: [UInt8], warning: String?) {
        let size = Self.scaledSize(width: width, height: height, denominator: denominator)
        let channels = Self.channels(of: pixelFormat)
        var flags = TJFLAG_LIMITSCANS
        if strict { flags |= TJFLAG_STOPONWARNING }
        var status: Int32 = 0
        let pixels = [UInt8](unsafeUninitializedCapacity: size.width * size.height * channels) { out, count in
            HugePages.advise(out)
            status = jpeg.withUnsafeBufferPointer { src in
                tjDecompress2(
                    handle, src.baseAddress, UInt(src.count), out.baseAddress,
                    Int32(size.width), 0, Int32(size.height), Int32(pixelFormat.rawValue), flags)
            }
            count = out.count
        }
        if status == 0 { return (pixels, nil) }
        let message = lastError
        if tjGetErrorCode(handle) == Int32(TJERR_WARNING.rawValue) && !strict {
            return (pixels, message)
        }
        throw PhotoPrepError(.decode, .corrupt, "libjpeg-turbo: \(message)")
    }

    static func channels(of format: TJPF) -> Int {
        switch format {
        case TJPF_GRAY: 1
        case TJPF_RGB, TJPF_BGR: 3
        default: 4
        }
    }

    private var lastError: String { String(cString: tjGetErrorStr2(handle)) }
}
