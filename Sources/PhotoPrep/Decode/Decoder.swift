internal import CTurboJPEG

/// The decode stage: JPEG through TurboJPEG and WebP through libwebp (both with shrink-on-load), PNG through
/// libpng, HEIC/HEIF and AVIF through libheif.
enum Decoder {
    struct Decoded {
        var image: PixelImage
        /// The image was decoded at 1/`scale` (JPEG and WebP; 1 for the others).
        var scale: Int
        var warnings: [String]
    }

    /// Decodes `bytes`, described by `info`, for an output of `target` pixels (in stored orientation).
    static func decode(
        _ bytes: [UInt8], info: SourceInfo, target: (width: Int, height: Int), options: PrepareOptions
    ) throws(PhotoPrepError) -> Decoded {
        try decode(bytes, info: info, plan: DecodePlan(info: info, fileBytes: bytes.count, target: target, options: options), options: options)
    }

    /// Decodes `bytes` as `plan` says: JPEG at its shrink-on-load scale, PNG whole or streamed.
    static func decode(_ bytes: [UInt8], info: SourceInfo, plan: DecodePlan, options: PrepareOptions) throws(PhotoPrepError) -> Decoded {
        switch info.format {
        case .jpeg:
            return try decodeJPEG(bytes, info: info, scale: plan.scale, strict: options.strict)
        case .png:
            let structure = info.png!
            let bytes = structure.withoutCompressedText(bytes)
            let grey = structure.isOpaqueGrey
            let image: PixelImage
            let warning: String?
            if plan.streamed || structure.hasAlpha {
                // Row by row: streamed and shrunk when the whole image is over the budget; transparency is
                // composed here in the sRGB-encoded space (libpng's simplified API composes in linear light,
                // which no viewer does).
                var shrinker = BoxShrinker(width: info.width, height: info.height, channels: grey ? 1 : 3, factor: plan.scale)
                warning = try LibPNGRowReader.read(bytes, grey: grey, background: options.background) { shrinker.add($0) }
                image = shrinker.image
            } else {
                (image, warning) = try LibPNGReader.decode(bytes, grey: grey, background: options.background, maxPixels: options.maxPixels)
            }
            if let warning, options.strict { throw PhotoPrepError(.decode, .corrupt, warning) }
            var warnings = warning.map { [$0] } ?? []
            if plan.streamed {
                warnings.append("a PNG of \(info.width) × \(info.height) was read row by row and shrunk to 1/\(plan.scale) to stay within the memory budget")
            }
            if structure.animated { warnings.append("animated PNG: only the first frame is used") }
            return Decoded(image: image, scale: plan.scale, warnings: warnings)
        case .heif, .avif:
            let (image, warnings) = try LibHeifFile.open(bytes) { (file) throws(PhotoPrepError) in
                try file.decode(background: options.background, threads: options.decodingThreads)
            }
            if let warning = warnings.first, options.strict { throw PhotoPrepError(.decode, .corrupt, warning) }
            return Decoded(image: image, scale: 1, warnings: warnings)
        case .webp:
            let structure = info.webp!
            let image = try LibWebPDecoder.decode(bytes, structure: structure, scale: plan.scale, background: options.background)
            let warnings = structure.animated ? ["animated WebP: only the first frame is used (of \(structure.frames))"] : []
            return Decoded(image: image, scale: plan.scale, warnings: warnings)
        }
    }

    /// The largest TurboJPEG scale-down (8, 4, 2 or 1) that still leaves `margin` × the target size
    /// in both dimensions for the final Lanczos3.
    static func shrinkOnLoadScale(width: Int, height: Int, target: (width: Int, height: Int), margin: Double) -> Int {
        for denominator in [8, 4, 2] {
            let scaled = TurboJPEGDecompressor.scaledSize(width: width, height: height, denominator: denominator)
            if Double(scaled.width) >= margin * Double(target.width) && Double(scaled.height) >= margin * Double(target.height) {
                return denominator
            }
        }
        return 1
    }

    static func decodeJPEG(_ bytes: [UInt8], info: SourceInfo, scale: Int, strict: Bool) throws(PhotoPrepError) -> Decoded {
        let decompressor = try TurboJPEGDecompressor()
        let header: TurboJPEGDecompressor.Header
        do {
            header = try decompressor.header(bytes)
        } catch where info.jpeg != nil && error.message.contains("subsampling") {
            // TurboJPEG's header call refuses sampling it has no name for (4:1:0, 3:1:1 …), which
            // libjpeg decodes all the same: take the frame header's own facts.
            header = .init(width: info.width, height: info.height, colorspace: Self.colorspace(of: info.jpeg!))
        }
        let format: TJPF
        switch header.colorspace {
        case Int32(TJCS_GRAY.rawValue): format = TJPF_GRAY
        case Int32(TJCS_CMYK.rawValue), Int32(TJCS_YCCK.rawValue): format = TJPF_CMYK
        default: format = TJPF_RGB
        }
        let (pixels, warning) = try decompressor.decode(
            bytes, width: header.width, height: header.height, denominator: scale, pixelFormat: format, strict: strict)
        let size = TurboJPEGDecompressor.scaledSize(width: header.width, height: header.height, denominator: scale)
        let image: PixelImage
        if format == TJPF_CMYK {
            // Adobe APP14 marks Photoshop-style CMYK, whose values are stored inverted (255 = no ink).
            image = cmykToRGB(pixels, width: size.width, height: size.height, inverted: info.jpeg?.adobeTransform != nil)
        } else {
            image = PixelImage(width: size.width, height: size.height, channels: format == TJPF_GRAY ? 1 : 3, pixels: pixels)
        }
        return Decoded(image: image, scale: scale, warnings: warning.map { ["libjpeg-turbo: \($0)"] } ?? [])
    }

    /// Whether a JPEG is decoded from its file row by row (`decodeJPEG(file:…)`): grey or YCbCr/RGB ones
    /// (CMYK is converted from a whole image).
    static func streamsJPEG(_ info: SourceInfo) -> Bool {
        info.format == .jpeg && (info.jpeg?.components == 1 || info.jpeg?.components == 3)
    }

    /// Decodes the JPEG file at `path` at 1/`scale` row by row (`LibJPEGRowReader`, the file read 64 KiB at a
    /// time): when it is resized in both dimensions, the rows go straight into the resizer (`Resizer.resize(_:
    /// Rows…)`) and come out at `target`, so that neither the file nor the decoded image is ever held whole;
    /// otherwise they fill the decoded image (the caller resizes it, if at all). The same pixels as
    /// `decodeJPEG(_:…)` then `Resizer.resize`. A progressive JPEG still holds its DCT coefficients until its
    /// last scan: libjpeg needs them, whoever decodes it (`djpeg` included).
    static func decodeJPEG(
        file path: String, info: SourceInfo, scale: Int, target: (width: Int, height: Int), strict: Bool
    ) throws(PhotoPrepError) -> Decoded {
        let reader = try LibJPEGRowReader(path: path, denominator: scale, grey: info.jpeg!.components == 1, strict: strict)
        let (width, height, channels) = (reader.width, reader.height, reader.channels)
        let expected = TurboJPEGDecompressor.scaledSize(width: info.width, height: info.height, denominator: scale)
        guard width == expected.width, height == expected.height else {
            throw PhotoPrepError(.decode, .corrupt, "the file changed while it was being read: its frame is now \(width) × \(height) at 1/\(scale)")
        }
        func readAll(into out: UnsafeMutablePointer<UInt8>, rows: Int, from y0: Int) throws(PhotoPrepError) {
            guard try reader.read(rows: rows, into: out) == rows else {
                throw PhotoPrepError(.decode, .corrupt, "libjpeg-turbo stopped before row \(y0 + rows) of \(height)")
            }
        }
        let image: PixelImage
        if width != target.width && height != target.height {
            var failure: PhotoPrepError?
            var strip = [UInt8](repeating: 0, count: 8 * width * channels)
            image = strip.withUnsafeMutableBufferPointer { buffer in
                let strip = buffer.baseAddress!
                let rows = Resizer.Rows(width: width, height: height, channels: channels) { y0, count in
                    do throws(PhotoPrepError) {
                        try readAll(into: strip, rows: count, from: y0)
                        return UnsafePointer(strip)
                    } catch {
                        failure = error
                        return nil
                    }
                }
                return Resizer.resize(rows, width: target.width, height: target.height)
            }
            if let failure { throw failure }
        } else {
            var failure: PhotoPrepError?
            let pixels = [UInt8](unsafeUninitializedCapacity: width * height * channels) { out, count in
                HugePages.advise(out)
                do throws(PhotoPrepError) { try readAll(into: out.baseAddress!, rows: height, from: 0) } catch { failure = error }
                count = out.count
            }
            if let failure { throw failure }
            image = PixelImage(width: width, height: height, channels: channels, pixels: pixels)
        }
        return Decoded(image: image, scale: scale, warnings: reader.warning.map { ["libjpeg-turbo: \($0)"] } ?? [])
    }

    /// The colour space libjpeg assumes for a frame: grey for one component, YCbCr for three unless
    /// Adobe says RGB, CMYK or YCCK for four.
    static func colorspace(of structure: JPEGStructure) -> Int32 {
        switch (structure.components, structure.adobeTransform) {
        case (1, _): Int32(TJCS_GRAY.rawValue)
        case (3, 0): Int32(TJCS_RGB.rawValue)
        case (3, _): Int32(TJCS_YCbCr.rawValue)
        case (4, 2): Int32(TJCS_YCCK.rawValue)
        default: Int32(TJCS_CMYK.rawValue)
        }
    }

    /// Naive CMYK → RGB (R = (1 − C)(1 − K) …), the conversion browsers and Pillow apply without a profile.
    static func cmykToRGB(_ cmyk: [UInt8], width: Int, height: Int, inverted: Bool) -> PixelImage {
        let count = width * height
        let rgb = [UInt8](unsafeUninitializedCapacity: count * 3) { out, initialized in
            cmyk.withUnsafeBufferPointer { src in
                for i in 0..<count {
                    var c = Int(src[i * 4]), m = Int(src[i * 4 + 1]), y = Int(src[i * 4 + 2]), k = Int(src[i * 4 + 3])
                    if !inverted { c = 255 - c; m = 255 - m; y = 255 - y; k = 255 - k }
                    out[i * 3] = UInt8((c * k + 127) / 255)
                    out[i * 3 + 1] = UInt8((m * k + 127) / 255)
                    out[i * 3 + 2] = UInt8((y * k + 127) / 255)
                }
            }
            initialized = count * 3
        }
        return PixelImage(width: width, height: height, channels: 3, pixels: rgb)
    }
}
