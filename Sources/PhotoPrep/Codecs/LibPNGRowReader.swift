internal import CPNG

/// libpng's classic API, row by row (`photoprep_png_read_rows` in the CPNG shim, which keeps libpng's
/// setjmp/longjmp error handling inside C). Used for PNGs with transparency, which are composed here as
/// every viewer shows them, and for PNGs too large to decode whole within the memory budget.
enum LibPNGRowReader {
    /// Decodes `png` and hands each row to `row` as 8-bit grey (`grey`, for opaque grey sources) or RGB,
    /// alpha composed onto `background` in the sRGB-encoded space — `c × a + background × (1 − a)`, as
    /// browsers, image viewers, Pillow and ImageMagick do — in 16-bit precision for 16-bit sources.
    /// Returns libpng's first warning, if it warned (as `LibPNGReader.decode` does).
    static func read(
        _ png: [UInt8], grey: Bool, background: RGBColor, row: (UnsafeBufferPointer<UInt8>) -> Void
    ) throws(PhotoPrepError) -> String? {
        try withoutActuallyEscaping(row) { (row) throws(PhotoPrepError) -> String? in
            let context = RowContext(grey: grey, background: background, row: row)
            var message = [CChar](repeating: 0, count: 256)
            let channels = png.withUnsafeBufferPointer { source in
                photoprep_png_read_rows(source.baseAddress, source.count, grey ? 1 : 0, { pointer, data, width, channels, sample in
                    let context = Unmanaged<RowContext>.fromOpaque(pointer!).takeUnretainedValue()
                    context.deliver(data!, width: Int(width), channels: Int(channels), bytesPerSample: Int(sample))
                    return 0
                }, Unmanaged.passUnretained(context).toOpaque(), &message, message.count)
            }
            let text = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            guard channels > 0 else { throw PhotoPrepError(.decode, .corrupt, "libpng: \(text)") }
            return text.isEmpty ? nil : "libpng: \(text)"
        }
    }

    /// What the C callback reaches through its context pointer: brings rows to 8 bits, composes alpha,
    /// passes them on.
    private final class RowContext {
        let grey: Bool
        let row: (UnsafeBufferPointer<UInt8>) -> Void
        /// The background per output channel, 16-bit (an 8-bit value × 257).
        let background: [Int64]
        var output: [UInt8] = []

        init(grey: Bool, background: RGBColor, row: @escaping (UnsafeBufferPointer<UInt8>) -> Void) {
            self.grey = grey
            self.row = row
            let weighted: Int = 299 * Int(background.red) + 587 * Int(background.green) + 114 * Int(background.blue)
            let colours: [UInt8] = grey ? [UInt8((weighted + 500) / 1000)] : [background.red, background.green, background.blue]
            self.background = colours.map { Int64($0) * 257 }
        }

        func deliver(_ data: UnsafePointer<UInt8>, width: Int, channels: Int, bytesPerSample: Int) {
            let alpha = channels == 2 || channels == 4
            let colours = alpha ? channels - 1 : channels
            if output.count != width * colours { output = [UInt8](repeating: 0, count: width * colours) }
            let background = self.background
            output.withUnsafeMutableBufferPointer { out in
                func sample(_ index: Int) -> Int64 {
                    // 16-bit samples arrive in native byte order (png_set_swap); 8-bit ones are scaled to 16.
                    bytesPerSample == 2
                        ? Int64(UnsafeRawPointer(data + index * 2).loadUnaligned(as: UInt16.self)) : Int64(data[index]) * 257
                }
                for x in 0..<width {
                    let a = alpha ? sample(x * channels + colours) : 65535
                    for c in 0..<colours {
                        // One rounding from 16-bit samples to the 8-bit result: (c·a + bg·(1 − a)) × 255 / 65535².
                        let mixed = sample(x * channels + c) * a + background[c] * (65535 - a)
                        out[x * colours + c] = UInt8((mixed * 255 + 2_147_418_112) / 4_294_836_225)
                    }
                }
            }
            output.withUnsafeBufferPointer { row($0) }
        }
    }
}
