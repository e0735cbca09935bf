/// An upload-ready JPEG and the report of how it was made.
public struct PreparedPhoto: Sendable {
    public var jpeg: [UInt8]
    public var report: PrepareReport
    /// One per `PrepareOptions.thumbnails` edge, smallest first.
    public var thumbnails: [Thumbnail] = []
    /// Its placeholder (`ThumbHash`), from the pixels stored (also in `report.placeholder`, in base64).
    public var placeholder: [UInt8] = []
}

/// A small copy of a prepared photo (`PrepareOptions.thumbnails`).
public struct Thumbnail: Sendable, Equatable {
    /// The long edge it was asked for; `width` and `height` are its size (never larger than the photo).
    public var edge: Int
    public var width: Int
    public var height: Int
    public var jpeg: [UInt8]
    /// Its SSIMULACRA2 score against the pixels it encodes.
    public var score: Double?
    /// The same pixels as WebP (`PrepareOptions.webpThumbnails`), with its quality and score (`WebPEncoder`).
    public var webp: [UInt8]?
    public var webpQuality: Int?
    public var webpScore: Double?

    public init(edge: Int, width: Int, height: Int, jpeg: [UInt8], score: Double?) {
        self.edge = edge
        self.width = width
        self.height = height
        self.jpeg = jpeg
        self.score = score
    }

    /// The folder every thumbnail's key starts with.
    public static let folder = "thumbnails"

    /// Where the thumbnail at `edge` of the photo at `key` goes: `thumbnails/{edge}/{key}` — the server's storage keys
    /// and the files `prepare --thumbnails` writes under `--out` alike.
    public static func key(of key: String, edge: Int) -> String { folder + "/" + String(edge) + "/" + key }

    /// Where its WebP goes: `thumbnails/webp/{edge}/{key}.webp` (a folder of its own: no photo's key can be another's WebP).
    public static func webpKey(of key: String, edge: Int) -> String { folder + "/webp/" + String(edge) + "/" + key + ".webp" }

    /// What the report says of it.
    public var summary: PrepareReport.ThumbnailSummary {
        PrepareReport.ThumbnailSummary(
            edge: edge, width: width, height: height, bytes: jpeg.count, score: score.map(PrepareReport.rounded), webpBytes: webp?.count,
            webpQuality: webpQuality, webpScore: webpScore.map(PrepareReport.rounded))
    }
}

/// What `PhotoPipeline.prepare` did to one photo.
public struct PrepareReport: Sendable, Codable, Equatable {
    /// A thumbnail's size, bytes and SSIMULACRA2 score, and its WebP's when one was made.
    public struct ThumbnailSummary: Sendable, Codable, Equatable {
        public var edge: Int
        public var width: Int
        public var height: Int
        public var bytes: Int
        public var score: Double?
        public var webpBytes: Int?
        public var webpQuality: Int?
        public var webpScore: Double?
    }

    /// A score as reports give it: two decimals.
    static func rounded(_ score: Double) -> Double { (score * 100).rounded() / 100 }

    /// How the output bytes came about.
    public enum Action: String, Sendable, Codable {
        /// Decoded, resized/oriented as needed, encoded under the budget.
        case reencoded
        /// The source JPEG already fitted and carried nothing to strip: returned byte for byte.
        case passedThrough
        /// The source JPEG already fitted; its metadata segments were removed without re-encoding.
        case metadataStripped
        /// The source JPEG already fitted but was not upright: its DCT blocks were rotated or
        /// flipped losslessly (like `jpegtran`), with metadata removed.
        case losslesslyOriented
    }

    /// Seconds spent in each stage.
    public struct Timings: Sendable, Codable, Equatable {
        public var decode = 0.0
        public var resize = 0.0
        public var orient = 0.0
        public var encode = 0.0
        /// Making the placeholder (`ThumbHash.placeholder`).
        public var placeholder = 0.0
        /// Making the thumbnails (`Thumbnails.make`), their WebPs included.
        public var thumbnails = 0.0
        /// Of which the WebPs (`WebPEncoder`: their searches).
        public var webp = 0.0
        /// Of which cutting the square thumbnails' square (`SquareCrop`: the focal point or the attention rule, the cut).
        public var squareCrop = 0.0
        public var total = 0.0
    }

    public var sourceFormat: ImageFormat
    public var sourceWidth: Int
    public var sourceHeight: Int
    public var sourceBytes: Int
    /// The EXIF orientation found in the source (1 when none).
    public var sourceOrientation: Int
    public var sourceHasGPS: Bool
    public var outputWidth: Int
    public var outputHeight: Int
    public var outputBytes: Int
    public var action: Action
    /// The JPEG quality of the output (nil when the source was passed through).
    public var quality: Int?
    /// The output's SSIMULACRA2 score against the resized photo it encodes (nil when the source was passed through —
    /// nothing was re-encoded — and when filling the budget, `QualityTarget.max`, which measures nothing).
    public var score: Double?
    /// The quality target the photo was prepared for (`QualityTarget.key`: `score:85`, `q:90`, `max`).
    public var target: String?
    /// The score target was not reached: reaching it needs more bytes than the budget (the best score that fits was
    /// taken), or even the top quality scores below it.
    public var missedTarget: Bool?
    /// The output's chroma: `4:2:0`, `4:4:4` or `grey` (nil when passed through).
    public var chroma: String?
    /// The output was written progressive.
    public var progressive: Bool?
    /// How many JPEG encodes the budget search ran.
    public var encodes: Int
    /// The JPEG was decoded at 1/`decodeScale` (1 for PNG and full-size decodes).
    public var decodeScale: Int
    /// Whether an ICC colour profile was written to the output.
    public var keptColorProfile: Bool
    /// Codec warnings (for example, "Premature end of JPEG file") and dropped-metadata notes.
    public var warnings: [String]
    public var timings: Timings
    /// The placeholder (`ThumbHash`) of the photo as stored, in base64: what an app draws while the photo loads.
    public var placeholder: String?
    /// The thumbnails made (`PrepareOptions.thumbnails`), smallest first; nil when none were asked for.
    public var thumbnails: [ThumbnailSummary]?
    /// Where square thumbnails were cut (`PrepareOptions.squareThumbnails`): the square's centre, as fractions of the
    /// photo's width and height, and what placed it.
    public var squareCrop: SquareCropSummary?

    public struct SquareCropSummary: Sendable, Codable, Equatable {
        public var x: Double
        public var y: Double
        public var rule: SquareCrop.Rule
    }
    /// When the photo was taken (EXIF `DateTimeOriginal` with `OffsetTimeOriginal`), as ISO 8601 with its offset: read
    /// before the metadata is dropped, never written to the output. Nil when the source has none, or no offset, or a
    /// value that is no date (`CaptureTime`).
    public var takenAt: String?
}
