/// What a photo's JPEG quality is chosen for.
///
/// By default (`high`) the smallest encode that looks the same as the resized photo in a flip test: the lowest quality
/// whose SSIMULACRA2 score against the pixels it encodes is at least 85 — and under the byte budget, which always wins
/// (a photo that cannot reach the score in its budget gets the best score that fits, and its report says so).
public enum QualityTarget: Sendable, Hashable, CustomStringConvertible {
    /// The smallest encode scoring at least this on SSIMULACRA2 (0–100).
    case score(Double)
    /// This libjpeg quality (1–100), or the highest under the budget below it.
    case fixed(Int)
    /// The highest quality under the byte budget: the budget filled.
    case max

    /// SSIMULACRA2 75: artefacts hard to notice without the original.
    public static let good = QualityTarget.score(75)
    /// SSIMULACRA2 85: indistinguishable in a flip test at 1:1 (the default).
    public static let high = QualityTarget.score(85)
    /// SSIMULACRA2 90: indistinguishable in a flicker test at 1:1.
    public static let visuallyLossless = QualityTarget.score(90)

    /// The names the command and the server take, with what each means.
    public static let named: [(name: String, target: QualityTarget)] = [
        ("good", .good), ("high", .high), ("visually-lossless", .visuallyLossless), ("max", .max),
    ]

    /// `good`, `high`, `visually-lossless`, `max`, a libjpeg quality `1`…`100`, or a score `score:NN` (30–100).
    public init?(_ text: String) {
        if let named = Self.named.first(where: { $0.name == text }) {
            self = named.target
        } else if let quality = Int(text), (1...100).contains(quality) {
            self = .fixed(quality)
        } else if text.hasPrefix("score:"), let score = Double(text.dropFirst(6)), (30...100).contains(score) {
            self = .score(score)
        } else {
            return nil
        }
    }

    public var description: String {
        switch self {
        case .score(let score):
            Self.named.first { $0.target == self }.map { "\($0.name) (SSIMULACRA2 \(Self.format(score)))" } ?? "score:\(Self.format(score))"
        case .fixed(let quality): "\(quality)"
        case .max: "max"
        }
    }

    /// How settings strings and manifests spell it: `score:85`, `q:90`, `max`.
    public var key: String {
        switch self {
        case .score(let score): "score:\(Self.format(score))"
        case .fixed(let quality): "q:\(quality)"
        case .max: "max"
        }
    }

    private static func format(_ score: Double) -> String {
        score == score.rounded() ? String(Int(score)) : String(score)
    }
}
