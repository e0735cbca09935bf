/// The point of a photo a square crop is centred on, as Mastodon's `focus` gives it: `x,y`, each from −1 to 1, with
/// (0, 0) the centre, x = −1 the left edge and y = 1 the top (mastodon docs, "Focal points"). What a client sends with
/// an upload (tus metadata `focus`) or through the API.
public struct FocalPoint: Sendable, Hashable, CustomStringConvertible {
    public var x: Double
    public var y: Double

    /// Nil unless both are finite numbers within −1…1.
    public init?(x: Double, y: Double) {
        guard x.isFinite, y.isFinite, (-1...1).contains(x), (-1...1).contains(y) else { return nil }
        self.x = x
        self.y = y
    }

    /// Reads `x,y` (e.g. `-0.5,0.25`); nil for anything else — two numbers, each within −1…1, nothing more.
    public init?(parsing text: String) {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: " ") }
        guard parts.count == 2, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy { "0123456789.+-eE".contains($0) } }),
            let x = Double(parts[0]), let y = Double(parts[1])
        else { return nil }
        self.init(x: x, y: y)
    }

    /// Where it is in the picture, as fractions of its width and height from the top-left corner.
    public var fraction: (x: Double, y: Double) { ((x + 1) / 2, (1 - y) / 2) }

    public var description: String { "\(x),\(y)" }

    /// What a focal point is, for a refusal's words.
    public static let expected = "\"x,y\", each from -1 to 1 (0,0 the centre, -1,1 the top left)"
}

extension StringProtocol {
    fileprivate func trimmingCharacters(in set: Character) -> String {
        var text = Substring(self)
        while text.first == set { text = text.dropFirst() }
        while text.last == set { text = text.dropLast() }
        return String(text)
    }
}
