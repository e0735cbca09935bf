import Crypto
import Foundation

/// Signed bearer tokens naming a user: `{userId}.{base64url(HMAC-SHA256(secret, userId))}`. The
/// services attach them to uploads; a storage server holding the same secret knows who is writing
/// (the integration tests' tus server checks them, with the storage rules, before creating an upload).
public struct AccessTokens: Sendable {
    let secret: [UInt8]

    public init(secret: String) {
        self.secret = Array(secret.utf8)
    }

    public func token(for userId: String) -> String {
        "\(userId).\(signature(userId))"
    }

    /// The `Authorization` header value for the user's requests.
    public func authorization(for userId: String) -> String { "Bearer \(token(for: userId))" }

    /// The user a token names, if its signature is valid.
    public func user(of token: String) -> String? {
        guard let dot = token.lastIndex(of: ".") else { return nil }
        let user = String(token[..<dot])
        return signature(user) == token[token.index(after: dot)...] ? user : nil
    }

    private func signature(_ userId: String) -> String {
        Data(HMAC<SHA256>.authenticationCode(for: Data(userId.utf8), using: SymmetricKey(data: secret))).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
