import CTurboJPEG

/// A progressive JPEG of `rgb` (`width` × `height`, 3 bytes a pixel) at `quality`, 4:4:4 or 4:2:0, made by TurboJPEG
/// (`tjCompress2` with `TJFLAG_PROGRESSIVE`): decoding one holds every coefficient and reads every scan.
public func progressiveJPEG(rgb: [UInt8], width: Int, height: Int, quality: Int, fullChroma: Bool) throws -> [UInt8] {
    guard let handle = tjInitCompress() else { throw TestSetupError(message: "tjInitCompress failed") }
    defer { tjDestroy(handle) }
    var output: UnsafeMutablePointer<UInt8>?
    var size: UInt = 0
    let subsampling = fullChroma ? TJSAMP_444 : TJSAMP_420
    let rc = rgb.withUnsafeBufferPointer {
        tjCompress2(
            handle, $0.baseAddress, Int32(width), 0, Int32(height), Int32(TJPF_RGB.rawValue), &output, &size,
            Int32(subsampling.rawValue), Int32(quality), TJFLAG_PROGRESSIVE | TJFLAG_ACCURATEDCT)
    }
    defer { if let output { tjFree(output) } }
    guard rc == 0, let output else { throw TestSetupError(message: "tjCompress2: \(String(cString: tjGetErrorStr2(handle)))") }
    return Array(UnsafeBufferPointer(start: output, count: Int(size)))
}
