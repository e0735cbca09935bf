/// EXIF orientation (TIFF tag 0x0112): how the stored pixels must be transformed to appear upright.
public enum Orientation: Int, Sendable, Codable, CaseIterable {
    case up = 1, mirrored = 2, rotated180 = 3, flippedVertically = 4
    case transposed = 5, rotated90Clockwise = 6, transverse = 7, rotated90CounterClockwise = 8

    /// Whether width and height trade places when the orientation is applied.
    public var swapsDimensions: Bool { rawValue >= 5 }

    /// Returns `image` transformed so that it appears upright.
    ///
    /// For an output pixel (ox, oy) of an image stored as W × H, the source pixel is:
    ///
    /// | orientation | source x | source y |
    /// |---|---|---|
    /// | 1 up | ox | oy |
    /// | 2 mirrored | W-1-ox | oy |
    /// | 3 rotated 180° | W-1-ox | H-1-oy |
    /// | 4 flipped vertically | ox | H-1-oy |
    /// | 5 transposed | oy | ox |
    /// | 6 rotate 90° clockwise | oy | H-1-ox |
    /// | 7 transverse | W-1-oy | H-1-ox |
    /// | 8 rotate 90° counter-clockwise | W-1-oy | ox |
    public func apply(to image: PixelImage) -> PixelImage {
        if self == .up { return image }
        let w = image.width, h = image.height, c = image.channels
        let outW = swapsDimensions ? h : w, outH = swapsDimensions ? w : h
        // Each output row walks the source with a fixed start and step (in pixels).
        func walk(_ oy: Int) -> (start: Int, step: Int) {
            switch self {
            case .up: (oy * w, 1)
            case .mirrored: (oy * w + w - 1, -1)
            case .rotated180: ((h - 1 - oy) * w + w - 1, -1)
            case .flippedVertically: ((h - 1 - oy) * w, 1)
            case .transposed: (oy, w)
            case .rotated90Clockwise: ((h - 1) * w + oy, -w)
            case .transverse: ((h - 1) * w + (w - 1 - oy), -w)
            case .rotated90CounterClockwise: (w - 1 - oy, w)
            }
        }
        let pixels = [UInt8](unsafeUninitializedCapacity: image.pixels.count) { out, count in
            image.pixels.withUnsafeBufferPointer { src in
                for oy in 0..<outH {
                    let (start, step) = walk(oy)
                    var s = start
                    var o = oy * outW * c
                    if c == 1 {
                        for _ in 0..<outW { out[o] = src[s]; s += step; o += 1 }
                    } else {
                        for _ in 0..<outW {
                            out[o] = src[s * 3]; out[o + 1] = src[s * 3 + 1]; out[o + 2] = src[s * 3 + 2]
                            s += step; o += 3
                        }
                    }
                }
            }
            count = image.pixels.count
        }
        return PixelImage(width: outW, height: outH, channels: c, pixels: pixels)
    }
}
