import Foundation
import Testing
@testable import PhotoPrep
import TestSupport

/// HEIC/HEIF, AVIF and WebP (TestImages/formats/, see PROVENANCE.md): each prepared into a JPEG within the
/// preset, upright, without metadata, its pixels checked against an independent decoder (heif-convert,
/// dwebp: Debian's libheif-examples and webp) and against the photo it was made from.
@Suite struct FormatTests {
    @Test(arguments: [
        ("formats/photo.heic", ImageFormat.heif), ("formats/grid.heic", .heif), ("formats/ten-bit.heic", .heif),
        ("formats/photo-8bit.avif", .avif), ("formats/photo-10bit.avif", .avif), ("formats/nclx-display-p3.avif", .avif),
        ("formats/lossy.webp", .webp), ("formats/lossless.webp", .webp), ("formats/alpha.webp", .webp), ("formats/animated.webp", .webp),
    ])
    func sniffsEachFormatFromItsFirstSixteenBytes(file: String, format: ImageFormat) throws {
        let bytes = try Fixture.bytes(file)
        #expect(try ImageFormat.sniff(Array(bytes.prefix(16))) == format, "what a server sees of an upload's start")
        #expect(try ImageFormat.sniff(bytes) == format)
    }

    @Test func aVideoIsNotTakenForAPhoto() {
        let mp4: [UInt8] = [0, 0, 0, 24] + Array("ftypisom".utf8) + [0, 0, 2, 0] + Array("isomiso2".utf8)
        let error = #expect(throws: PhotoPrepError.self) { try ImageFormat.sniff(mp4) }
        #expect(error?.message.contains("isom") == true, "\(error?.message ?? "")")
    }

    /// Every decodable file: a JPEG of the expected size under the group preset's budget, no EXIF or XMP,
    /// and the same picture as the independent decoder's output resized to that size.
    @Test(arguments: [
        ("formats/photo.heic", 2048, 1280), ("formats/grid.heic", 1280, 800), ("formats/ten-bit.heic", 640, 400),
        ("formats/with-depth.heic", 640, 400), ("formats/irot-exif-contradicts.heic", 640, 400),
        ("formats/photo-8bit.avif", 1280, 800), ("formats/photo-10bit.avif", 1280, 800),
        ("formats/lossy.webp", 1920, 1280), ("formats/lossless.webp", 480, 320), ("formats/alpha.webp", 640, 400),
    ])
    func preparesIntoAJPEGWithinThePresetMatchingAnIndependentDecoder(file: String, width: Int, height: Int) throws {
        let options = PrepareOptions(preset: .group)
        let photo = try PhotoPipeline(options: options).prepare(contentsOf: Fixture.path(file))
        #expect(photo.report.outputWidth == width && photo.report.outputHeight == height)
        #expect(photo.jpeg.count < options.maxBytes)
        #expect(photo.report.action == .reencoded)
        let output = try JPEGStructure.parse(photo.jpeg)
        #expect(output.exif == nil && !output.segments.contains { $0.marker == 0xE1 }, "no EXIF or XMP in the output")

        let reference = try IndependentDecoder.decode(Fixture.path(file))
        let resized = reference.width == width ? reference : Resizer.resize(reference, width: width, height: height)
        let psnr = lumaPSNR(try decodeJPEG(photo.jpeg), resized)
        #expect(psnr > 36, "\(file): \(psnr) dB against \(IndependentDecoder.tool(for: file))")
    }

    /// The container's `irot` turns the stored 400 × 640 pixels upright; the EXIF Orientation 3 in the same
    /// file must not turn them again. Checked against the JPEG the file was made from.
    @Test func heifRotationWinsOverEXIFOrientation() throws {
        let photo = try PhotoPipeline(preset: .group).prepare(contentsOf: Fixture.path("formats/irot-exif-contradicts.heic"))
        #expect(photo.report.sourceOrientation == 1)
        let image = try decodeJPEG(photo.jpeg)
        let upright = Resizer.resize(try decodeFixture("photos/ladybird-2560x1600.jpg"), width: 640, height: 400)
        #expect(lumaDifference(image, upright) < 4, "upright, as the phone shows it")
        #expect(lumaDifference(image, Orientation.rotated180.apply(to: upright)) > 15, "the EXIF orientation was applied on top")
    }

    /// Item 1 is a 320 × 200 depth map; the primary item (2) is the photo.
    @Test func thePrimaryImageIsDecodedNotTheFirstOne() throws {
        let probe = try PhotoPipeline(preset: .group).probe(contentsOf: Fixture.path("formats/with-depth.heic"))
        #expect(probe.width == 640 && probe.height == 400)
        #expect(probe.otherMetadata.contains("depth map"))
        let photo = try PhotoPipeline(preset: .group).prepare(contentsOf: Fixture.path("formats/with-depth.heic"))
        let upright = Resizer.resize(try decodeFixture("photos/ladybird-2560x1600.jpg"), width: 640, height: 400)
        #expect(lumaDifference(try decodeJPEG(photo.jpeg), upright) < 4)
    }

    /// A 3 × 2 grid of 512 × 512 tiles cropped to 1280 × 800: assembled whole, the cropped last column and row
    /// included, the same as the storm photo it was cut from.
    @Test func aGridIsAssembledWhole() throws {
        let decoded = try decodeFixture("formats/grid.heic")
        #expect(decoded.width == 1280 && decoded.height == 800)
        let storm = Resizer.resize(try decodeFixture("photos/storm-1920x1280.jpg"), width: 1280, height: 800)
        #expect(lumaPSNR(decoded, storm) > 30)
        for (x, y) in [(0..<512, 0..<512), (1024..<1280, 0..<512), (0..<512, 512..<800), (1024..<1280, 512..<800)] {
            let ours = decoded.mean(x: x, y: y), theirs = storm.mean(x: x, y: y)
            #expect(close(ours, theirs, within: 4), "tile at \(x.lowerBound),\(y.lowerBound): \(ours) vs \(theirs)")
        }
    }

    /// The tiles decode on several threads or on the calling one to the same bytes.
    @Test func aGridDecodesTheSameOnOneThreadOrSeveral() throws {
        var options = PrepareOptions(preset: .group)
        options.decodingThreads = 1
        let one = try PhotoPipeline(options: options).prepare(contentsOf: Fixture.path("formats/grid.heic"))
        options.decodingThreads = 4
        let four = try PhotoPipeline(options: options).prepare(contentsOf: Fixture.path("formats/grid.heic"))
        #expect(one.jpeg == four.jpeg)
    }

    /// 10-bit samples are rounded to the nearest 8-bit value: against heif-convert's 16-bit PNG of the same
    /// file (read by libpng, which rounds too), at most one level apart and nearly always equal. Truncating
    /// (libheif's own conversion shifts the bits away) would be off by half a level on average.
    @Test(arguments: ["formats/ten-bit.heic", "formats/photo-10bit.avif"])
    func tenBitSamplesAreRoundedToEightBits(file: String) throws {
        let ours = try decodeFixture(file)
        let reference = try IndependentDecoder.decode(Fixture.path(file))
        #expect(ours.width == reference.width && ours.height == reference.height)
        let differences = zip(ours.pixels, reference.pixels).map { abs(Int($0) - Int($1)) }
        let mean = Double(differences.reduce(0, +)) / Double(differences.count)
        #expect(differences.max() ?? 0 <= 1)
        #expect(mean < 0.1, "mean difference \(mean) of a level")
    }

    /// Transparency is composed onto the background as for PNG: the right half of alpha.webp is fully
    /// transparent, the left half opaque.
    @Test(arguments: [RGBColor.white, .black])
    func alphaIsComposedOntoTheBackground(background: RGBColor) throws {
        var options = PrepareOptions(preset: .group)
        options.background = background
        let image = try decodeJPEG(try PhotoPipeline(options: options).prepare(contentsOf: Fixture.path("formats/alpha.webp")).jpeg)
        let expected = (Double(background.red), Double(background.green), Double(background.blue))
        #expect(close(image.mean(x: 340..<640, y: 0..<400), expected, within: 2))
        let reference = try IndependentDecoder.decode(Fixture.path("formats/alpha.webp"), background: background)
        #expect(close(image.mean(x: 0..<300, y: 0..<400), reference.mean(x: 0..<300, y: 0..<400), within: 2))
    }

    @Test func anAnimatedWebPGivesItsFirstFrame() throws {
        let photo = try PhotoPipeline(preset: .group).prepare(contentsOf: Fixture.path("formats/animated.webp"))
        let image = try decodeJPEG(photo.jpeg)
        #expect(image.width == 64 && image.height == 48)
        #expect(close(image.mean(x: 0..<64, y: 0..<48), (0, 255, 0), within: 6), "green, the first frame (the second is red)")
        #expect(photo.report.warnings.contains { $0.contains("first frame") })
    }

    @Test func webPEXIFOrientationIsApplied() throws {
        let photo = try PhotoPipeline(preset: .group).prepare(contentsOf: Fixture.path("formats/exif-orientation-6.webp"))
        #expect(photo.report.sourceOrientation == 6)
        let image = try decodeJPEG(photo.jpeg)
        #expect(image.width == 40 && image.height == 60)
        #expect(close(image.mean(x: 5..<35, y: 2..<16), (255, 0, 0), within: 12), "red band on top")
        #expect(close(image.mean(x: 5..<35, y: 30..<58), (0, 0, 255), within: 12))
    }

    /// GPS in the HEIC's EXIF is seen (and reported), never carried into the JPEG.
    @Test func exifAndGPSAreDropped() throws {
        let pipeline = PhotoPipeline(preset: .group)
        let probe = try pipeline.probe(contentsOf: Fixture.path("formats/photo.heic"))
        #expect(probe.hasEXIF && probe.hasGPS)
        let photo = try pipeline.prepare(contentsOf: Fixture.path("formats/photo.heic"))
        #expect(photo.report.sourceHasGPS)
        #expect(!photo.jpeg.contains(sequence: Array("PhotoprepTest".utf8)), "the EXIF Make is gone with the rest")
        #expect(try JPEGStructure.parse(photo.jpeg).exif == nil)
    }

    /// Display P3 stays Display P3: an ICC profile in the HEIC is kept byte for byte (as JPEG's is); an nclx
    /// colour description becomes an ICC profile with the same primaries; sRGB's nclx needs none.
    @Test func colourIsKeptAsTheFileDescribesIt() throws {
        let pipeline = PhotoPipeline(preset: .group)
        let withICC = try pipeline.prepare(contentsOf: Fixture.path("formats/display-p3.heic"))
        let heifProfile = try #require(try SourceInfo.read(try Fixture.bytes("formats/display-p3.heic"), maxPixels: .max).iccProfile)
        #expect(withICC.report.keptColorProfile)
        #expect(try JPEGStructure.parse(withICC.jpeg).iccProfile == heifProfile)

        let withNCLX = try pipeline.prepare(contentsOf: Fixture.path("formats/nclx-display-p3.avif"))
        #expect(withNCLX.report.keptColorProfile)
        let made = try #require(try JPEGStructure.parse(withNCLX.jpeg).iccProfile)
        #expect(JPEGSegments.iccColorSpace(made) == "RGB ")
        for tag in ["rXYZ", "gXYZ", "bXYZ", "wtpt"] {
            let ours = try #require(ICCTags.xyz(tag, in: made)), theirs = try #require(ICCTags.xyz(tag, in: heifProfile))
            #expect(abs(ours.0 - theirs.0) < 0.002 && abs(ours.1 - theirs.1) < 0.002 && abs(ours.2 - theirs.2) < 0.002, "\(tag): \(ours) vs \(theirs)")
        }
        // And they are P3's, not sRGB's: P3's red colorant (D50) has X ≈ 0.515, sRGB's 0.436.
        #expect(abs((ICCTags.xyz("rXYZ", in: made)?.0 ?? 0) - 0.515) < 0.01)

        let srgb = try pipeline.prepare(contentsOf: Fixture.path("formats/photo-8bit.avif"))
        #expect(!srgb.report.keptColorProfile)
    }

    @Test(arguments: [
        ("formats/truncated.heic", "Extent in iloc box"), ("formats/not-really.heic", "No 'meta' box"),
        ("formats/truncated.webp", "truncated"),
    ])
    func damagedFilesAreClearErrorsNamingTheFile(file: String, words: String) throws {
        let error = #expect(throws: PhotoPrepError.self) { try PhotoPipeline(preset: .group).prepare(contentsOf: Fixture.path(file)) }
        #expect(error?.kind == .corrupt)
        #expect(error?.message.contains(words) == true, "\(error?.message ?? "")")
        #expect(error?.description.contains(file) == true)
    }

    /// Refused from the headers before any pixel is decoded: over the pixel limit, or over the memory
    /// budget (HEIF has no scaled decode, so the whole image counts).
    @Test(arguments: ["formats/photo.heic", "formats/grid.heic", "formats/lossy.webp", "formats/photo-8bit.avif"])
    func limitsAreCheckedFromTheHeaders(file: String) throws {
        var options = PrepareOptions(preset: .group)
        options.maxPixels = 500_000
        let tooMany = #expect(throws: PhotoPrepError.self) { try PhotoPipeline(options: options).prepare(contentsOf: Fixture.path(file)) }
        #expect(tooMany?.kind == .tooLarge && tooMany?.stage == .limits)
        #expect(tooMany?.message.contains("over the limit of 500000 pixels") == true, "\(tooMany?.message ?? "")")

        options = PrepareOptions(preset: .group)
        options.maxMemory = 4 << 20
        let tooBig = #expect(throws: PhotoPrepError.self) { try PhotoPipeline(options: options).prepare(contentsOf: Fixture.path(file)) }
        #expect(tooBig?.kind == .tooLarge && tooBig?.message.contains("memory budget") == true, "\(tooBig?.message ?? "")")
    }

    /// The batch command takes a folder exported from a phone as it is: every format prepared, the damaged
    /// files reported by name, the others untouched.
    @Test func theBatchCommandPreparesAFolderOfEveryFormat() async throws {
        let out = try temporaryFolder()
        let before = try Fixture.bytes("formats/photo.heic")
        let result = try await photoprep(["prepare", Fixture.path("formats"), "--preset", "group", "--out", out.path])
        #expect(result.status != 0, "three damaged files fail the run")
        for name in ["photo", "grid", "ten-bit", "with-depth", "irot-exif-contradicts", "display-p3", "photo-8bit", "photo-10bit",
                     "nclx-display-p3", "lossy", "lossless", "alpha", "animated", "exif-orientation-6"] {
            let jpeg = try [UInt8](Data(contentsOf: out.appendingPathComponent("formats/\(name).jpg")))
            #expect(try ImageFormat.sniff(jpeg) == .jpeg && jpeg.count < 500 * 1024, "\(name)")
        }
        for damaged in ["truncated.heic", "not-really.heic", "truncated.webp"] {
            #expect(result.stderr.contains(damaged), "\(damaged) is named")
        }
        #expect(try Fixture.bytes("formats/photo.heic") == before)
    }
}

/// Decodes a file with a decoder other than ours — Debian's heif-convert (libheif-examples) for HEIF and
/// AVIF, dwebp (webp) for WebP — into a PNG, read back with libpng. heif-convert applies the container's
/// transforms, as phones do; neither applies an EXIF orientation.
enum IndependentDecoder {
    static func tool(for file: String) -> String { file.hasSuffix(".webp") ? "dwebp" : "heif-convert" }

    static func decode(_ path: String, background: RGBColor = .white) throws -> PixelImage {
        let folder = try temporaryFolder()
        let png = folder.appendingPathComponent("reference.png").path
        let arguments = path.hasSuffix(".webp") ? [path, "-o", png] : [path, png]
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/" + tool(for: path))
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try launch(process)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw ReferenceFailed(tool: tool(for: path), file: path) }
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: png)))
        let info = try SourceInfo.read(bytes, maxPixels: .max)
        var options = PrepareOptions(maxEdge: .max, maxBytes: .max)
        options.background = background
        return try Decoder.decode(bytes, info: info, target: (info.width, info.height), options: options).image
    }

    struct ReferenceFailed: Error {
        var tool: String
        var file: String
    }
}

/// Reads an ICC profile's XYZ tags (`rXYZ`, `wtpt` …): three s15Fixed16 numbers after the type and a
/// reserved word.
enum ICCTags {
    static func xyz(_ signature: String, in profile: [UInt8]) -> (Double, Double, Double)? {
        func u32(_ at: Int) -> Int { Int(profile[at]) << 24 | Int(profile[at + 1]) << 16 | Int(profile[at + 2]) << 8 | Int(profile[at + 3]) }
        func fixed(_ at: Int) -> Double { Double(Int32(bitPattern: UInt32(u32(at)))) / 65536 }
        guard profile.count >= 132 else { return nil }
        for entry in 0..<u32(128) {
            let at = 132 + entry * 12
            guard at + 12 <= profile.count else { return nil }
            guard String(decoding: profile[at..<(at + 4)], as: UTF8.self) == signature else { continue }
            let offset = u32(at + 4)
            guard offset + 20 <= profile.count else { return nil }
            return (fixed(offset + 8), fixed(offset + 12), fixed(offset + 16))
        }
        return nil
    }
}

extension Array where Element == UInt8 {
    func contains(sequence: [UInt8]) -> Bool {
        guard sequence.count <= count else { return false }
        return (0...(count - sequence.count)).contains { self[$0..<($0 + sequence.count)].elementsEqual(sequence) }
    }
}
