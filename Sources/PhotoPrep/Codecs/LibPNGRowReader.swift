internal import CPNG

/// libpng's classic API, row by row (`photoprep_png_read_rows` in the CPNG shim, which keeps libpng's
/// setjmp/longjmp error handling inside C): for PNGs too large to decode whole within the memory budget.
enum LibPNGRowReader {
    /// Decodes `png` (not interlaced) and hands each row to `row` as 8-bit grey (`grey`) or RGB, alpha
    /// composed onto `background` in the sRGB-encoded space (`c × a + background × (1 − a)`, as browsers
    /// and image viewers show it).
    static func read(
        _ png: [UInt8], grey: Bool, background: RGBColor, row: (UnsafeBufferPointer<UInt8>) -> Void
    ) throws(PhotoPrepError) {
        try withoutActuallyEscaping(row) { (row) throws(PhotoPrepError) in
            let context = RowContext(grey: grey, background: background, row: row)
            var message = [CChar](repeating: 0, count: 256)
            let channels = png.withUnsafeBufferPointer { source in
                photoprep_png_read_rows(source.baseAddress, source.count, grey ? 1 : 0, { pointer, data, width, channels in
                    let context = Unmanaged<RowContext>.fromOpaque(pointer!).takeUnretainedValue()
                    context.deliver(UnsafeBufferPointer(start: data, count: Int(width) * Int(channels)), channels: Int(channels))
                    return 0
                }, Unmanaged.passUnretained(context).toOpaque(), &message, message.count)
            }
            guard channels > 0 else {
                let text = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                throw PhotoPrepError(.decode, .corrupt, "libpng: \(text)")
            }
        }
    }

    /// What the C callback reaches through its context pointer: composes alpha, passes rows on.
    private final class RowContext {
        let grey: Bool
        let background: RGBColor
        let row: (UnsafeBufferPointer<UInt8>) -> Void
        var composed: [UInt8] = []

        init(grey: Bool, background: RGBColor, row: @escaping (UnsafeBufferPointer<UInt8>) -> Void) {
            self.grey = grey
            self.background = background
            self.row = row
        }

        func deliver(_ samples: UnsafeBufferPointer<UInt8>, channels: Int) {
            guard channels == 2 || channels == 4 else { return row(samples) }
            let colours = channels - 1
            let pixels = samples.count / channels
            if composed.count != pixels * colours { composed = [UInt8](repeating: 0, count: pixels * colours) }
            let bg: [Int] = grey ? [Int(Self.luma(background))] : [Int(background.red), Int(background.green), Int(background.blue)]
            composed.withUnsafeMutableBufferPointer { out in
                for i in 0..<pixels {
                    let a = Int(samples[i * channels + colours])
                    for c in 0..<colours {
                        let sample = Int(samples[i * channels + c])
                        let mixed: Int = (sample * a + bg[c] * (255 - a) + 127) / 255
                        out[i * colours + c] = UInt8(mixed)
                    }
                }
            }
            composed.withUnsafeBufferPointer { row($0) }
        }

        static func luma(_ colour: RGBColor) -> UInt8 {
            let weighted: Int = 299 * Int(colour.red) + 587 * Int(colour.green) + 114 * Int(colour.blue)
            return UInt8((weighted + 500) / 1000)
        }
    }
}
