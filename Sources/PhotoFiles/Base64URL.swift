public import Foundation

extension Data {
    /// Base64url (RFC 4648 §5: `-` and `_`, padding optional), as in JWTs and page cursors.
    public init?(base64URL text: some StringProtocol) {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        self.init(base64Encoded: base64)
    }
}
