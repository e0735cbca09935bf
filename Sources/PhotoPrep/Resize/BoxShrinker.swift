/// Shrink-on-load for sources that arrive row by row (large PNGs): averages each `factor` × `factor`
/// block of pixels as the rows stream in, holding one row of sums and the shrunk image — never the
/// source. The output is ⌈width / factor⌉ × ⌈height / factor⌉, as TurboJPEG's scaled JPEG decode
/// gives, and the final Lanczos3 resize follows as for a JPEG decoded at 1/`factor`. Blocks cut by the
/// right or bottom edge average the pixels they have.
struct BoxShrinker {
    let width: Int
    let height: Int
    let channels: Int
    let factor: Int
    let outputWidth: Int
    let outputHeight: Int
    private var sums: [UInt32]
    private var rowsInBlock = 0
    private var rowsSeen = 0
    private(set) var pixels: [UInt8] = []

    init(width: Int, height: Int, channels: Int, factor: Int) {
        self.width = width
        self.height = height
        self.channels = channels
        self.factor = max(1, factor)
        outputWidth = (width + self.factor - 1) / self.factor
        outputHeight = (height + self.factor - 1) / self.factor
        sums = [UInt32](repeating: 0, count: outputWidth * channels)
        pixels.reserveCapacity(outputWidth * outputHeight * channels)
    }

    /// Adds one source row (`width × channels` samples).
    mutating func add(_ row: UnsafeBufferPointer<UInt8>) {
        precondition(row.count == width * channels, "a row of \(row.count) samples, expected \(width * channels)")
        let (channels, factor, width) = (self.channels, self.factor, self.width)
        sums.withUnsafeMutableBufferPointer { sums in
            for x in 0..<width {
                let out = (x / factor) * channels
                for c in 0..<channels { sums[out + c] += UInt32(row[x * channels + c]) }
            }
        }
        rowsInBlock += 1
        rowsSeen += 1
        if rowsInBlock == factor || rowsSeen == height { emitRow() }
    }

    /// The shrunk image, once every row was added.
    var image: PixelImage {
        precondition(rowsSeen == height, "\(rowsSeen) of \(height) rows added")
        return PixelImage(width: outputWidth, height: outputHeight, channels: channels, pixels: pixels)
    }

    private mutating func emitRow() {
        for x in 0..<outputWidth {
            let columns = UInt32(min(factor, width - x * factor))
            let count = columns * UInt32(rowsInBlock)
            for c in 0..<channels {
                pixels.append(UInt8((sums[x * channels + c] + count / 2) / count))
            }
        }
        for i in sums.indices { sums[i] = 0 }
        rowsInBlock = 0
    }
}
