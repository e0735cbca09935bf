internal import CTurboJPEG

/// Owns one TurboJPEG transform handle (`tjInitTransform`), freed in `deinit` (`tjDestroy`):
/// lossless rotations and flips of the DCT coefficients, as `jpegtran` does.
final class TurboJPEGTransformer {
    private let handle: tjhandle

    init() throws(PhotoPrepError) {
        guard let handle = tjInitTransform() else {
            throw PhotoPrepError(.orient, .codecFailure, "tjInitTransform failed: \(String(cString: tjGetErrorStr2(nil)))")
        }
        self.handle = handle
    }

    deinit { tjDestroy(handle) }

    /// `jpeg` turned upright without decoding (`tjTransform` with `TJXOPT_PERFECT`, no markers
    /// copied), or nil when the image has partial MCU blocks on an edge the transform would move.
    func upright(_ jpeg: [UInt8], orientation: Orientation) -> [UInt8]? {
        let operation: TJXOP = switch orientation {
        case .up: TJXOP_NONE
        case .mirrored: TJXOP_HFLIP
        case .rotated180: TJXOP_ROT180
        case .flippedVertically: TJXOP_VFLIP
        case .transposed: TJXOP_TRANSPOSE
        case .rotated90Clockwise: TJXOP_ROT90
        case .transverse: TJXOP_TRANSVERSE
        case .rotated90CounterClockwise: TJXOP_ROT270
        }
        var transform = tjtransform()
        transform.op = Int32(operation.rawValue)
        transform.options = TJXOPT_PERFECT | TJXOPT_COPYNONE
        var output: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        let rc = jpeg.withUnsafeBufferPointer {
            tjTransform(handle, $0.baseAddress, UInt($0.count), 1, &output, &size, &transform, 0)
        }
        defer { if let output { tjFree(output) } }
        guard rc == 0, let output else { return nil }
        return Array(UnsafeBufferPointer(start: output, count: Int(size)))
    }
}
