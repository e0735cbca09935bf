/// The square a photo's avatar thumbnails are cut from: the largest square the photo has (a cover crop), centred on
/// the client's focal point when it sent one, else on the area libvips' attention rule picks (`AttentionCrop`), else
/// on the photo's centre — moved inward where the centre is too near an edge for the square to fit.
public struct SquareCrop: Sendable, Equatable {
    /// What placed it.
    public enum Rule: String, Sendable, Codable {
        case focus, attention, centre
    }

    /// Its top-left corner and side, in the photo's pixels.
    public var left: Int
    public var top: Int
    public var side: Int
    public var rule: Rule

    /// The square for a `width` × `height` photo with pixels `image` (at any scale of the photo: the attention rule
    /// reads them), centred by `focus`, else the rule, else the middle.
    public init(width: Int, height: Int, focus: FocalPoint?, image: PixelImage) {
        let side = min(width, height)
        self.side = side
        let centre: (x: Double, y: Double)
        if let focus {
            (centre, rule) = (focus.fraction, .focus)
        } else if let found = AttentionCrop.centre(of: image, cropWidth: side * image.width / max(width, 1), cropHeight: side * image.height / max(height, 1)) {
            (centre, rule) = (found, .attention)
        } else {
            (centre, rule) = ((0.5, 0.5), .centre)
        }
        func start(_ fraction: Double, _ length: Int) -> Int { min(max(Int((fraction * Double(length)).rounded()) - side / 2, 0), length - side) }
        left = start(centre.x, width)
        top = start(centre.y, height)
    }

    /// Its centre, as fractions of the photo's width and height.
    public func centre(width: Int, height: Int) -> (x: Double, y: Double) {
        ((Double(left) + Double(side) / 2) / Double(width), (Double(top) + Double(side) / 2) / Double(height))
    }

    /// The square cut out of `image` (the photo at its size).
    func cut(_ image: PixelImage) -> PixelImage {
        let c = image.channels
        var pixels = [UInt8]()
        pixels.reserveCapacity(side * side * c)
        for y in top..<(top + side) {
            let start = (y * image.width + left) * c
            pixels.append(contentsOf: image.pixels[start..<(start + side * c)])
        }
        return PixelImage(width: side, height: side, channels: c, pixels: pixels)
    }
}
