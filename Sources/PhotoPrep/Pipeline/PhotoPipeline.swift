#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Turns one photo — JPEG, PNG, HEIC/HEIF, AVIF or WebP — into an upload-ready JPEG: sniff → decode →
/// resize → orient → encode under the byte budget.
///
/// The pipeline is a value with no shared state: call `prepare` from as many tasks or threads as you
/// like (each call owns its codec handles). Calls are synchronous and CPU-bound; the caller chooses
/// the concurrency.
///
/// ```swift
/// let pipeline = PhotoPipeline(preset: .group)
/// let photo = try pipeline.prepare(contentsOf: "IMG_0001.jpg")
/// print(photo.report.outputWidth, photo.report.quality ?? 0, photo.jpeg.count)
/// ```
public struct PhotoPipeline: Sendable {
    public var options: PrepareOptions

    public init(options: PrepareOptions) {
        self.options = options
    }

    public init(preset: PrepareOptions.Preset) {
        self.init(options: PrepareOptions(preset: preset))
    }

    /// Prepares the photo in the file at `path`; errors name the file. A JPEG is decoded from the file row by
    /// row (into the resizer, when it is resized both ways), so that the file is not held during its decode, nor
    /// the decoded image when it is resized.
    ///
    /// `header`, from `header(contentsOf:)` of the same file, spares reading and parsing it again when the photo is
    /// decoded from the file row by row and cannot pass through as it is.
    public func prepare(contentsOf path: String, header: Header? = nil) throws(PhotoPrepError) -> PreparedPhoto {
        do {
            if let header, header.streamed, max(header.info.width, header.info.height) > options.maxEdge {
                // Decoded from the file and too large to pass through: the bytes would only be parsed again and dropped.
                var none: [UInt8] = []
                return try prepare(taking: &none, file: path, header: header)
            }
            var bytes = try FileBytes.read(path)
            return try prepare(taking: &bytes, file: path)
        } catch {
            throw error.naming(path)
        }
    }

    /// A photo's header as `prepare` reads it, without the file's bytes: what its decode is estimated to hold.
    public struct Header: Sendable {
        let info: SourceInfo
        let fileBytes: Int
        /// Decoded from the file row by row (a JPEG), not from its bytes.
        let streamed: Bool
        /// The memory preparing the photo is estimated to hold (`MemoryEstimate`), as `prepare(contentsOf:)` plans
        /// it: what a `MemoryBudget` is asked for.
        public let estimate: Int
    }

    /// Reads the header of the photo in the file at `path` (see `Header`). Nil when the file cannot be read or
    /// its header is refused: `prepare` then fails at once with the error.
    public func header(contentsOf path: String) -> Header? {
        guard let bytes = try? FileBytes.read(path), var info = try? SourceInfo.read(bytes, maxPixels: options.maxPixels) else { return nil }
        info.jpeg?.exif = nil  // it points into the bytes (the orientation and GPS flag are read from it already)
        let target = options.outputSize(width: info.width, height: info.height)
        let plan = DecodePlan(info: info, fileBytes: bytes.count, target: target, options: options, fromFile: true)
        return Header(info: info, fileBytes: bytes.count, streamed: info.format == .jpeg && plan.streamed, estimate: plan.estimate.bytes)
    }

    /// Prepares the photo in `bytes`.
    public func prepare(_ bytes: [UInt8]) throws(PhotoPrepError) -> PreparedPhoto {
        var bytes = bytes
        return try prepare(taking: &bytes, file: nil)
    }

    /// Prepares the photo in `bytes`, the content of the file at `path` (when there is one). When the photo is
    /// decoded from the file row by row (`Decoder.decodeJPEG(file:…)`), `bytes` are emptied first: a caller that
    /// holds no other copy frees them before the largest allocations come.
    /// With a `header` (of the file at `path`), `bytes` may be empty: the header is not read again.
    package func prepare(taking bytes: inout [UInt8], file path: String?, header: Header? = nil) throws(PhotoPrepError) -> PreparedPhoto {
        try prepare(taking: &bytes, file: path, header: header, passThrough: options.allowPassThrough)
    }

    /// A JPEG that fits is kept as it is unless its re-encode for a score target is at most this fraction of its size.
    static let reencodeSaving = 0.9

    private func prepare(taking bytes: inout [UInt8], file path: String?, header: Header?, passThrough: Bool) throws(PhotoPrepError) -> PreparedPhoto {
        let clock = ContinuousClock()
        let start = clock.now
        var info: SourceInfo
        if let header { info = header.info } else { info = try SourceInfo.read(bytes, maxPixels: options.maxPixels) }
        let fileBytes = header?.fileBytes ?? bytes.count
        let orientation = info.orientation
        let target = options.outputSize(width: info.width, height: info.height)
        var report = PrepareReport(
            sourceFormat: info.format, sourceWidth: info.width, sourceHeight: info.height, sourceBytes: fileBytes,
            sourceOrientation: orientation.rawValue, sourceHasGPS: info.exif.hasGPS,
            outputWidth: 0, outputHeight: 0, outputBytes: 0, action: .reencoded, quality: nil, encodes: 0,
            decodeScale: 1, keptColorProfile: false, warnings: info.warnings, timings: .init(), takenAt: info.exif.takenAt?.iso8601)

        if passThrough, !bytes.isEmpty, let (jpeg, action, checked, warning) = lossless(bytes, info: info, orientation: orientation) {
            var kept = report
            kept.action = action
            if let warning { kept.warnings.append(warning) }
            let upright = try JPEGStructure.parse(jpeg)
            kept.outputWidth = upright.width
            kept.outputHeight = upright.height
            kept.outputBytes = jpeg.count
            kept.keptColorProfile = upright.iccProfile != nil
            // With a score target, the photo is encoded for it too: a camera's high-quality JPEG that fits the budget
            // may still carry several times the bytes a viewer can tell apart. The smaller wins, by a clear margin
            // (`reencodeSaving`): the source itself is the better copy of its pixels.
            if case .score = options.quality {
                var copy = bytes
                var reencoded = try prepare(taking: &copy, file: nil, header: nil, passThrough: false)
                if Double(reencoded.jpeg.count) <= Self.reencodeSaving * Double(jpeg.count) {
                    reencoded.report.timings.total = seconds(clock.now - start)
                    return reencoded
                }
                // The same pixels: its thumbnails and placeholder are the kept photo's.
                (kept.placeholder, kept.thumbnails, kept.squareCrop) = (reencoded.report.placeholder, reencoded.report.thumbnails, reencoded.report.squareCrop)
                kept.timings.placeholder = reencoded.report.timings.placeholder
                (kept.timings.thumbnails, kept.timings.webp, kept.timings.squareCrop) =
                    (reencoded.report.timings.thumbnails, reencoded.report.timings.webp, reencoded.report.timings.squareCrop)
                kept.timings.total = seconds(clock.now - start)
                return PreparedPhoto(jpeg: jpeg, report: kept, thumbnails: reencoded.thumbnails, placeholder: reencoded.placeholder)
            }
            let thumbnails = try thumbnails(ofPassedThrough: upright.iccProfile, decoded: checked, report: &kept)
            let placeholder = Self.placeholder(of: checked, report: &kept)
            kept.timings.total = seconds(clock.now - start)
            return PreparedPhoto(jpeg: jpeg, report: kept, thumbnails: thumbnails, placeholder: placeholder)
        }

        let plan = DecodePlan(info: info, fileBytes: fileBytes, target: target, options: options, fromFile: path != nil)
        try checkMemory(plan)
        let rowsFromFile = path != nil && info.format == .jpeg && plan.streamed
        if rowsFromFile {
            info.jpeg?.exif = nil  // the one part of the header that still pointed into the bytes
            bytes = []  // before the largest allocations come
        }
        var mark = clock.now
        func lap() -> Double {
            let now = clock.now
            defer { mark = now }
            return seconds(now - mark)
        }
        let decoded: Decoder.Decoded
        if rowsFromFile, let path {
            decoded = try Decoder.decodeJPEG(file: path, info: info, scale: plan.scale, target: target, strict: options.strict)
        } else {
            if bytes.isEmpty, let path { bytes = try FileBytes.read(path) }  // not decoded row by row after all
            decoded = try Decoder.decode(bytes, info: info, plan: plan, options: options)
        }
        report.decodeScale = decoded.scale
        report.warnings += decoded.warnings
        report.timings.decode = lap()  // with the resize, when the rows went straight into it

        var image = decoded.image
        if image.width != target.width || image.height != target.height {
            image = Resizer.resize(image, width: target.width, height: target.height)
        }
        report.timings.resize = lap()

        image = orientation.apply(to: image)
        report.timings.orient = lap()

        let profile = colorProfileSegments(info.iccProfile, channels: image.channels, warnings: &report.warnings)
        let encoded = try BudgetEncoder(options: options, extraSegments: profile).encode(image)
        report.timings.encode = lap()

        report.outputWidth = encoded.width
        report.outputHeight = encoded.height
        report.outputBytes = encoded.jpeg.count
        report.quality = encoded.quality
        report.score = encoded.score.map(PrepareReport.rounded)
        report.target = options.quality.key
        report.missedTarget = encoded.missedTarget
        report.chroma = image.channels == 1 ? "grey" : encoded.settings.fullChroma ? "4:4:4" : "4:2:0"
        report.progressive = encoded.settings.progressive
        if encoded.missedTarget, case .score(let target) = options.quality {
            report.warnings.append(
                "SSIMULACRA2 \(report.score ?? 0) is below the target \(QualityTarget.score(target)): "
                    + (encoded.quality == options.qualities.upperBound ? "the top quality scores no higher" : "reaching it takes more than the byte budget"))
        }
        report.encodes = encoded.encodes
        report.keptColorProfile = !profile.isEmpty
        // From the pixels just encoded (shrunk to fit the budget, if it came to that): no second decode.
        let stored = encoded.width == image.width ? image : Resizer.resize(image, width: encoded.width, height: encoded.height)
        let thumbnails = try Thumbnails.make(
            from: stored, options: options, extraSegments: profile, iccProfile: profile.isEmpty ? nil : info.iccProfile, report: &report)
        let placeholder = Self.placeholder(of: stored, report: &report)
        report.timings.total = seconds(clock.now - start)
        return PreparedPhoto(jpeg: encoded.jpeg, report: report, thumbnails: thumbnails, placeholder: placeholder)
    }

    /// The placeholder of the photo whose pixels (upright, at any scale) are `image`, timed into `report`.
    private static func placeholder(of image: PixelImage, report: inout PrepareReport) -> [UInt8] {
        let clock = ContinuousClock(), started = clock.now
        let hash = ThumbHash.placeholder(of: image)
        report.placeholder = ThumbHash.base64(hash)
        report.timings.placeholder = seconds(clock.now - started)
        return hash
    }

    /// Thumbnails of a JPEG kept without re-encoding, from `decoded`: its pixels as decoded while checking it, at the
    /// smallest DCT scale that still covers the largest thumbnail.
    private func thumbnails(
        ofPassedThrough iccProfile: [UInt8]?, decoded image: PixelImage, report: inout PrepareReport
    ) throws(PhotoPrepError) -> [Thumbnail] {
        guard !options.thumbnails.isEmpty else { return [] }
        let profile = colorProfileSegments(iccProfile, channels: image.channels, warnings: &report.warnings)
        return try Thumbnails.make(from: image, options: options, extraSegments: profile, iccProfile: profile.isEmpty ? nil : iccProfile, report: &report)
    }

    /// How a photo is decoded for its thumbnails alone (nil when none are asked for): at the smallest DCT scale
    /// that still covers the largest.
    private func thumbnailPlan(_ info: SourceInfo, fileBytes: Int) -> DecodePlan? {
        guard let largest = options.thumbnails.max() else { return nil }
        var small = options
        // A square's side is the photo's short side: the long side must be as much larger.
        small.maxEdge = options.squareThumbnails ? largest * max(info.width, info.height) / max(1, min(info.width, info.height)) + 1 : largest
        return DecodePlan(info: info, fileBytes: fileBytes, target: small.outputSize(width: info.width, height: info.height), options: small)
    }

    /// The source JPEG without decoding it, when it already fits: within the size and the budget,
    /// 8-bit YCbCr or grey, Huffman-coded, well-formed to its EOI, decoding without a single warning.
    /// Then it is passed through as it is (only when it holds nothing else), or rebuilt from the
    /// segments we keep (`JPEGSegments.rebuilt`), or turned upright losslessly (`tjTransform`, which
    /// writes a new file) when its EXIF orientation is not 1 and its edges allow it.
    /// The check's decode is made at the thumbnails' scale (1/8 when none are asked for) and returned upright
    /// (`checked`): the thumbnails and the placeholder of a photo kept as it is are made from it, with no second decode.
    func lossless(
        _ bytes: [UInt8], info: SourceInfo, orientation: Orientation
    ) -> (jpeg: [UInt8], action: PrepareReport.Action, checked: PixelImage, warning: String?)? {
        guard let structure = info.jpeg, structure.wellFormed,
            max(info.width, info.height) <= options.maxEdge,
            !structure.arithmetic, structure.components == 1 || structure.components == 3,
            structure.adobeTransform == nil || structure.adobeTransform == 1 || structure.components == 1
        else { return nil }
        // Only a file that decodes without a warning is kept; checked after the size where the size is known first,
        // as for a progressive photo even a 1/8 decode reads every scan (41 ms of a 2 MP photo's 103).
        func decodesCleanly(scale: Int = 8) -> PixelImage? { try? Decoder.decodeJPEG(bytes, info: info, scale: scale, strict: true).image }
        // The profile is kept when it may be (`profileProblem`); otherwise its segments go with the other metadata — also
        // when the segments make no profile (their chunks numbered inconsistently: `JPEGStructure` said so).
        let problem = options.metadata == .colorProfileOnly
            ? info.iccProfile.flatMap { profileProblem($0, channels: structure.components == 1 ? 1 : 3) } : nil
        let keepICC = options.metadata == .colorProfileOnly && info.iccProfile != nil && problem == nil
        if orientation == .up {
            // Passed through only when the file holds nothing but what we keep.
            let rebuilt = JPEGSegments.rebuilt(bytes, structure: structure, keepICC: keepICC)
            guard rebuilt.count < options.maxBytes else { return nil }
            let plan = thumbnailPlan(info, fileBytes: bytes.count)
            guard let checked = decodesCleanly(scale: plan?.scale ?? 8) else { return nil }
            let whole = rebuilt.count == bytes.count
            return (whole ? bytes : rebuilt, whole ? .passedThrough : .metadataStripped, checked, problem)
        }
        guard let checked = decodesCleanly(scale: thumbnailPlan(info, fileBytes: bytes.count)?.scale ?? 8), let transformer = try? TurboJPEGTransformer(),
            let upright = transformer.upright(bytes, orientation: orientation)
        else { return nil }
        let profile = keepICC ? info.iccProfile.flatMap(JPEGSegments.iccSegments) ?? [] : []
        let jpeg = upright.withUnsafeBytes { JPEGSegments.inserting(profile, into: $0) }
        return jpeg.count < options.maxBytes ? (jpeg, .losslesslyOriented, orientation.apply(to: checked), problem) : nil
    }

    /// Refuses a photo whose decode, as planned, would hold more than `options.maxMemory` (`MemoryEstimate`).
    func checkMemory(_ plan: DecodePlan) throws(PhotoPrepError) {
        guard plan.estimate.bytes <= options.maxMemory else {
            throw PhotoPrepError(
                .limits, .tooLarge,
                "preparing it needs about \(MemoryEstimate.megabytes(plan.estimate.bytes)), over the memory budget of \(MemoryEstimate.megabytes(options.maxMemory)) (--max-memory): \(plan.estimate.reason)")
        }
    }

    /// The APP2 segments for the source's ICC profile, when the policy keeps it and it may be kept (`profileProblem`).
    private func colorProfileSegments(_ profile: [UInt8]?, channels: Int, warnings: inout [String]) -> [UInt8] {
        guard options.metadata == .colorProfileOnly, let profile else { return [] }
        if let problem = profileProblem(profile, channels: channels) {
            warnings.append(problem)
            return []
        }
        return JPEGSegments.iccSegments(profile) ?? []
    }

    /// Why `profile` may not go out with a photo of `channels` channels, if it may not: it must be an ICC profile —
    /// its header's size its own, the `acsp` signature, read by Little CMS — describing the output's colour space (a
    /// CMYK profile does not describe converted RGB pixels), and small enough for the byte budget. Anything else in
    /// an APP2 `ICC_PROFILE` segment (400 KB of HTML passed through byte for byte) is somebody's payload.
    func profileProblem(_ profile: [UInt8], channels: Int) -> String? {
        let expected = channels == 1 ? "GRAY" : "RGB "
        let declared = profile.count >= 4 ? profile[0..<4].reduce(0) { $0 << 8 | Int($1) } : -1
        guard profile.count >= 132, declared == profile.count, profile[36..<40].elementsEqual("acsp".utf8), LittleCMSProfile.opens(profile) else {
            return "the ICC profile (\(profile.count) bytes) is not a valid profile; it was dropped"
        }
        guard let space = JPEGSegments.iccColorSpace(profile), space == expected else {
            return "the ICC profile (\(JPEGSegments.iccColorSpace(profile) ?? "?")) does not describe the \(channels == 1 ? "grey" : "RGB") output; it was dropped"
        }
        guard let segments = JPEGSegments.iccSegments(profile), segments.count <= options.maxBytes / 4 else {
            return "the ICC profile (\(profile.count) bytes) is too large for the byte budget; it was dropped"
        }
        return nil
    }
}

func seconds(_ duration: Duration) -> Double {
    let (s, attoseconds) = duration.components
    return Double(s) + Double(attoseconds) / 1e18
}

/// Reads a whole file into memory with POSIX calls, keeping `strerror`'s words in errors.
package enum FileBytes {
    package static func read(_ path: String) throws(PhotoPrepError) -> [UInt8] {
        func failure(_ what: String) -> PhotoPrepError {
            PhotoPrepError(.read, .io, "\(what): \(String(cString: strerror(errno)))", file: path)
        }
        // Without blocking: opening a FIFO for reading waits for a writer, forever (a batch hung on one named x.jpg);
        // it is refused below as not a regular file. A regular file's reads ignore the flag.
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw failure("cannot open") }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw failure("cannot stat") }
        guard (status.st_mode & S_IFMT) == S_IFREG else {
            throw PhotoPrepError(.read, .io, "not a regular file", file: path)
        }
        let size = Int(status.st_size)
        var failed = false
        let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            var done = 0
            while done < size {
                let n = Glibc.read(fd, buffer.baseAddress! + done, size - done)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { failed = n < 0; break }
                done += n
            }
            count = done
        }
        if failed { throw failure("cannot read") }
        return bytes
    }
}
