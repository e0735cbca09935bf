#if canImport(Glibc)
import Glibc
#endif

/// How to prepare a photo: the size and byte budget, and the policies around them.
public struct PrepareOptions: Sendable, Hashable {
    /// The built-in targets of the app's three photo kinds.
    public enum Preset: String, Sendable, CaseIterable {
        /// Profile pictures: long edge 1024 px, under 500 KiB.
        case profile
        /// Group photos: long edge 2048 px, under 500 KiB.
        case group
        /// Album photos: long edge 2048 px, under 5 MiB (the storage rule's `5 * 1024 * 1024`).
        case photo
    }

    /// What metadata the output keeps.
    public enum Metadata: String, Sendable, Hashable {
        /// Keep the source's ICC colour profile; drop EXIF (GPS, serials, thumbnails), XMP, IPTC, comments.
        case colorProfileOnly
        /// Drop everything, the ICC profile too.
        case none
    }

    /// The long edge of the output is at most this many pixels; images are never upscaled.
    public var maxEdge: Int
    /// The output is strictly smaller than this many bytes.
    public var maxBytes: Int
    /// What the JPEG quality is chosen for: by default the smallest encode scoring SSIMULACRA2 85 (`QualityTarget`).
    /// The byte budget always wins.
    public var quality: QualityTarget = .high
    /// The JPEG qualities the encoder may choose from.
    public var qualities: ClosedRange<Int> = 50...100
    /// Each chosen quality is also written progressive, and kept so when that is smaller.
    public var progressive: Bool = true
    /// What transparency is flattened onto.
    public var background: RGBColor = .white
    public var metadata: Metadata = .colorProfileOnly
    /// Images whose header declares more pixels are refused before decoding (sharp's default, 16383²).
    public var maxPixels: Int = 268_402_689
    /// A photo whose decode would hold more than this many bytes at once (estimated from its header:
    /// progressive JPEGs hold every coefficient, PNGs the whole image) is refused before decoding.
    /// Per photo: a batch with `--jobs N` may use N times as much.
    public var maxMemory: Int = 256 << 20
    /// Treat codec warnings (for example, a truncated JPEG) as errors.
    public var strict: Bool = false
    /// JPEGs are decoded at 1/2, 1/4 or 1/8 scale while that leaves at least this many times the
    /// output size for the final Lanczos3 (1 is Pillow's `draft` rule: the smallest scale that still
    /// covers the output). Chosen with `photoprep bench --fidelity` on the calibration corpus at 1024 px: with 1,
    /// a photo decoded at a scale just above the output scored 66–93 SSIMULACRA2 against the whole decode's Lanczos3
    /// (5 of 21 photos); with 1.5 every photo scores at least 95 (the 12 MP ones still decode at 1/2, 74–108 ms);
    /// 2 decodes those whole for +4 points at twice the time.
    public var shrinkOnLoadMargin: Double = 1.5
    /// When even the lowest quality misses the budget, dimensions shrink, but not below this long edge.
    public var minimumEdge: Int = 256
    /// A fitting encode within this fraction of the budget ends the search without proving that the
    /// next quality up would miss.
    public var budgetTolerance: Double = 0.02
    /// Threads libheif may decode a HEIF grid's tiles on (iPhones store a 12 MP photo as 48 tiles of 512 × 512):
    /// by default one per processor. JPEG, PNG and WebP decode on the calling thread.
    public var decodingThreads: Int = PrepareOptions.processors
    /// Pass a JPEG through unchanged (or with metadata stripped losslessly) when it already fits.
    public var allowPassThrough: Bool = true
    /// Thumbnails to make with the photo: their long edges in pixels (none by default). Made from the
    /// photo's own pixels, never larger than the photo, at the same `quality` target and no byte budget (quality 82 when
    /// the photo fills its budget, `QualityTarget.max`).
    public var thumbnails: [Int] = []
    /// Each thumbnail also as WebP, from the same pixels, when one reaches the JPEG's SSIMULACRA2 score in fewer bytes
    /// (`WebPEncoder`).
    public var webpThumbnails = false
    /// Thumbnails are squares of these sides (avatars, shown as circles) instead of long-edge fits: cut from the
    /// photo by `SquareCrop`, centred on `focus` when given.
    public var squareThumbnails = false
    /// The point square thumbnails are centred on (nil: the attention rule, else the centre).
    public var focus: FocalPoint?

    public init(maxEdge: Int, maxBytes: Int) {
        self.maxEdge = maxEdge
        self.maxBytes = maxBytes
    }

    public init(preset: Preset) {
        switch preset {
        case .profile: self.init(maxEdge: 1024, maxBytes: 500 * 1024)
        case .group: self.init(maxEdge: 2048, maxBytes: 500 * 1024)
        case .photo: self.init(maxEdge: 2048, maxBytes: 5 * 1024 * 1024)
        }
    }

    /// The processors online (`sysconf(_SC_NPROCESSORS_ONLN)`).
    public static let processors: Int = max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))

    /// The output size for a source of `width` × `height`: long edge at most `maxEdge`, aspect kept,
    /// computed from the original dimensions so that shrink-on-load never changes it.
    public func outputSize(width: Int, height: Int) -> (width: Int, height: Int) {
        let long = max(width, height)
        guard long > maxEdge else { return (width, height) }
        let scale = Double(maxEdge) / Double(long)
        let short = { (side: Int) in max(1, Int((Double(side) * scale).rounded())) }
        return width >= height ? (maxEdge, short(height)) : (short(width), maxEdge)
    }
}
