/// Packed 8-bit pixels, row after row with no padding: 1 channel (grey) or 3 (RGB, sRGB-encoded).
public struct PixelImage: Sendable, Equatable {
    public var width: Int
    public var height: Int
    public var channels: Int
    public var pixels: [UInt8]

    public init(width: Int, height: Int, channels: Int, pixels: [UInt8]) {
        precondition(channels == 1 || channels == 3, "PixelImage holds grey or RGB pixels")
        precondition(pixels.count == width * height * channels, "pixel count does not match the size")
        self.width = width
        self.height = height
        self.channels = channels
        self.pixels = pixels
    }

    /// The same picture in 3 channels (grey repeated); itself when it has them already.
    public var rgbImage: PixelImage {
        channels == 3 ? self : PixelImage(width: width, height: height, channels: 3, pixels: pixels.flatMap { [$0, $0, $0] })
    }

    /// The channel values of the pixel at (`x`, `y`); grey images repeat their one value.
    public func rgb(x: Int, y: Int) -> (UInt8, UInt8, UInt8) {
        let i = (y * width + x) * channels
        return channels == 1 ? (pixels[i], pixels[i], pixels[i]) : (pixels[i], pixels[i + 1], pixels[i + 2])
    }
}

/// An 8-bit sRGB colour (the background that transparency is flattened onto).
public struct RGBColor: Sendable, Hashable {
    public var red: UInt8
    public var green: UInt8
    public var blue: UInt8

    public init(red: UInt8, green: UInt8, blue: UInt8) {
        self.red = red
        self.green = green
        self.blue = blue
    }

    public static let white = RGBColor(red: 255, green: 255, blue: 255)
    public static let black = RGBColor(red: 0, green: 0, blue: 0)
}
