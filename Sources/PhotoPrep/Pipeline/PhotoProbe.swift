/// What a photo contains and what `prepare` would do with it, read from the headers (and a 1/8-scale
/// trial decode for JPEGs), without preparing it.
public struct PhotoProbe: Sendable, Codable, Equatable {
    public var format: ImageFormat
    public var width: Int
    public var height: Int
    public var bytes: Int
    /// EXIF orientation (1 when absent).
    public var orientation: Int
    /// JPEG: "baseline", "progressive" … plus "arithmetic"; PNG: "8-bit RGB", "16-bit grey + alpha", "interlaced" …
    public var encoding: String
    /// JPEG: "YCbCr", "grey", "CMYK", "YCCK"; PNG: "grey", "RGB", "palette" …
    public var colorModel: String
    /// The ICC profile's size and colour space ("RGB ", "GRAY" …), when there is one.
    public var colorProfile: String?
    public var hasEXIF: Bool
    public var hasGPS: Bool
    /// Other metadata found: "XMP", "IPTC", "comment", "APPn", "EXIF between scans", "JFIF thumbnail" …
    public var otherMetadata: [String]
    /// Bytes after the JPEG's end-of-image marker (a second image, a ZIP, a motion photo's video):
    /// never kept by `prepare`.
    public var trailingBytes: Int
    public var animated: Bool
    public var warnings: [String]
    /// What `prepare` with these options would do.
    public var plan: Plan

    public struct Plan: Sendable, Codable, Equatable {
        /// "pass through", "strip metadata", "orient losslessly", "re-encode", or "refuse: …".
        public var action: String
        public var outputWidth: Int
        public var outputHeight: Int
        /// JPEG shrink-on-load denominator the decode would use.
        public var decodeScale: Int
    }
}

extension PhotoPipeline {
    /// Describes the photo in `bytes` and what `prepare` would do with it.
    public func probe(_ bytes: [UInt8]) throws(PhotoPrepError) -> PhotoProbe {
        let format = try ImageFormat.sniff(bytes)
        var refusal: String?
        let info: SourceInfo
        do {
            info = try SourceInfo.read(bytes, maxPixels: options.maxPixels)
        } catch where error.kind == .tooLarge || error.kind == .unsupportedFeature {
            refusal = error.message
            info = try SourceInfo.read(bytes, maxPixels: .max, checkFeatures: false)
        }
        let orientation = info.orientation
        let target = options.outputSize(width: info.width, height: info.height)
        let plan = DecodePlan(info: info, fileBytes: bytes.count, target: target, options: options)
        if refusal == nil {
            do { try checkMemory(plan) } catch { refusal = error.message }
        }
        var probe = PhotoProbe(
            format: format, width: info.width, height: info.height, bytes: bytes.count, orientation: orientation.rawValue,
            encoding: "", colorModel: "", colorProfile: info.iccProfile.map { "\($0.count) bytes, \(JPEGSegments.iccColorSpace($0) ?? "unknown space")" },
            hasEXIF: info.jpeg?.exif != nil || info.png?.exif != nil || info.heif?.exif != nil || info.webp?.exif != nil, hasGPS: info.exif.hasGPS,
            otherMetadata: [], trailingBytes: info.jpeg?.trailingBytes ?? 0,
            animated: info.png?.animated ?? info.webp?.animated ?? false, warnings: info.warnings,
            plan: .init(action: "", outputWidth: 0, outputHeight: 0, decodeScale: 1))
        let swapped = orientation.swapsDimensions
        probe.plan.outputWidth = swapped ? target.height : target.width
        probe.plan.outputHeight = swapped ? target.width : target.height
        if let jpeg = info.jpeg {
            probe.encoding = jpeg.coding.rawValue + (jpeg.arithmetic ? ", arithmetic" : "") + (jpeg.precision != 8 ? ", \(jpeg.precision)-bit" : "")
            probe.colorModel = switch (jpeg.components, jpeg.adobeTransform) {
            case (1, _): "grey"
            case (3, 0): "RGB"
            case (3, _): "YCbCr"
            case (4, 2): "YCCK"
            case (4, _): "CMYK"
            default: "\(jpeg.components) components"
            }
            func name(_ segment: JPEGStructure.Segment) -> String {
                let payload = bytes[segment.payload]
                return switch segment.marker {
                case 0xFE: "comment"
                case 0xE1 where payload.starts(with: Array("http://ns.adobe.com/xap/1.0/".utf8)): "XMP"
                case 0xE1 where payload.starts(with: Array("Exif".utf8)): "EXIF"
                case 0xED: "IPTC"
                default: "APP\(segment.marker - 0xE0)"
                }
            }
            for segment in jpeg.segments where jpeg.isMetadata(segment, bytes: bytes) {
                let name = name(segment)
                if name != "EXIF" && !probe.otherMetadata.contains(name) { probe.otherMetadata.append(name) }
            }
            for segment in jpeg.segments where segment.marker == 0xE0 && segment.payload.count > JPEGSegments.jfifLength
                && bytes[segment.payload].starts(with: Array("JFIF".utf8)) {
                probe.otherMetadata.append("JFIF thumbnail")
            }
            for segment in jpeg.strays {
                let name = name(segment) + " between scans"
                if !probe.otherMetadata.contains(name) { probe.otherMetadata.append(name) }
            }
            probe.plan.decodeScale = plan.scale
        } else if let png = info.png {
            let model = ["grey", "", "RGB", "palette", "grey + alpha", "", "RGB + alpha"]
            probe.encoding = "\(png.bitDepth)-bit" + (png.interlaced ? ", interlaced" : "")
            probe.colorModel = (png.colorType < model.count ? model[png.colorType] : "type \(png.colorType)") + (png.hasTransparencyChunk ? " + tRNS" : "")
            probe.plan.decodeScale = plan.scale
        } else if let heif = info.heif {
            probe.encoding = "\(format == .avif ? "AV1" : "HEVC"), \(heif.bitDepth)-bit"
            if (heif.codedWidth, heif.codedHeight) != (info.width, info.height) {
                probe.encoding += ", stored \(heif.codedWidth) × \(heif.codedHeight) (the container turns or crops it)"
            }
            probe.colorModel = "YCbCr" + (heif.hasAlpha ? " + alpha" : "")
            if let nclx = heif.colorDescription {
                probe.colorModel += ", nclx \(nclx.primaries)/\(nclx.transfer)/\(nclx.matrix)" + (nclx.primaries == 12 && nclx.transfer == 13 ? " (Display P3)" : "")
            }
            if heif.hasXMP { probe.otherMetadata.append("XMP") }
            if heif.depthImages > 0 { probe.otherMetadata.append("depth map") }
            if heif.thumbnails > 0 { probe.otherMetadata.append("thumbnail") }
            if heif.topLevelImages > 1 { probe.otherMetadata.append("\(heif.topLevelImages - 1) other image\(heif.topLevelImages > 2 ? "s" : "")") }
        } else if let webp = info.webp {
            probe.encoding = webp.coding + (webp.animated ? ", animated (\(webp.frames) frames)" : "")
            probe.colorModel = webp.hasAlpha ? "RGB + alpha" : "RGB"
            if webp.hasXMP { probe.otherMetadata.append("XMP") }
            probe.plan.decodeScale = plan.scale
        }
        if let refusal {
            probe.plan.action = "refuse: \(refusal)"
        } else if options.allowPassThrough, let (_, action, _, _) = lossless(bytes, info: info, orientation: orientation) {
            probe.plan.action = switch action {
            case .passedThrough: "pass through"
            case .metadataStripped: "strip metadata"
            case .losslesslyOriented: "orient losslessly"
            case .reencoded: "re-encode"
            }
        } else {
            probe.plan.action = "re-encode"
        }
        return probe
    }

    /// Describes the photo in the file at `path`; errors name the file.
    public func probe(contentsOf path: String) throws(PhotoPrepError) -> PhotoProbe {
        do {
            return try probe(try FileBytes.read(path))
        } catch {
            throw error.naming(path)
        }
    }
}
