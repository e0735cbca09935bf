/// A failure to prepare one photo: which stage failed, what kind of failure, and the codec's own words.
///
/// `kind` is a struct with static members rather than an enum so that kinds can be added later
/// without breaking callers' `switch` statements.
public struct PhotoPrepError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The pipeline stage that failed, in data-flow order.
    public enum Stage: String, Sendable {
        case read, sniff, limits, decode, orient, resize, encode, write
    }

    /// What went wrong.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }

        /// Not a JPEG, PNG, HEIF/HEIC, AVIF or WebP (or not an image at all).
        public static let unsupportedFormat = Kind("unsupported format")
        /// A feature we do not decode (12-bit or lossless JPEG, a HEIF codec libheif lacks).
        public static let unsupportedFeature = Kind("unsupported feature")
        /// The header declares more pixels than the configured limit.
        public static let tooLarge = Kind("image too large")
        /// The data is damaged (truncated, malformed, or refused by the codec).
        public static let corrupt = Kind("corrupt data")
        /// Even the smallest allowed image at the lowest allowed quality is over the byte budget.
        public static let budgetUnreachable = Kind("budget unreachable")
        /// The codec could not be set up or failed internally.
        public static let codecFailure = Kind("codec failure")
        /// Two images compared with each other are not of one size.
        public static let sizeMismatch = Kind("sizes differ")
        /// Reading or writing a file failed.
        public static let io = Kind("I/O error")
    }

    public var stage: Stage
    public var kind: Kind
    /// The detailed reason, keeping libjpeg-turbo's or libpng's own message where there is one.
    public var message: String
    /// The file being prepared, when known.
    public var file: String?

    public init(_ stage: Stage, _ kind: Kind, _ message: String, file: String? = nil) {
        self.stage = stage
        self.kind = kind
        self.message = message
        self.file = file
    }

    public var description: String {
        let prefix = file.map { "\($0): " } ?? ""
        return "\(prefix)\(stage) failed (\(kind)): \(message)"
    }

    /// Says how large a photo's header claims it is: any two sizes, so the product is counted wide (two 32-bit
    /// sizes from a hostile header overflow `Int`, which trapped: one upload stopped the server).
    static func tooLarge(width: Int, height: Int, limit: Int) -> PhotoPrepError {
        let pixels = width.multipliedFullWidth(by: height)
        let count = pixels.high == 0 ? "\(pixels.low)" : "more than \(UInt.max)"
        return PhotoPrepError(.limits, .tooLarge, "\(width) × \(height) = \(count) pixels is over the limit of \(limit) pixels")
    }

    func naming(_ file: String?) -> PhotoPrepError {
        var copy = self
        copy.file = copy.file ?? file
        return copy
    }
}
