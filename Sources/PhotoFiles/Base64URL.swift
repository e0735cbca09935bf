#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

extension Data {
    /// Base64url (RFC 4648 §5: `-` and `_`, padding optional), as in JWTs and page cursors. (FoundationEssentials
    /// only, like the rest of this module: the batch and the pipeline's users need no more of Foundation.)
    public init?(base64URL text: some StringProtocol) {
        var base64 = String(text.map { $0 == "-" ? "+" : $0 == "_" ? "/" : $0 })
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        self.init(base64Encoded: base64)
    }
}
