public import Foundation
import Crypto

/// Signs events as Standard Webhooks do (standardwebhooks.com): `webhook-signature` is `v1,` and the base64
/// HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}` under the secret. With two secrets (rotating: the new one
/// added, receivers moved to it, the old one removed) each signs, space-separated, and a receiver that knows either
/// accepts. A secret is `whsec_` and its base64 bytes, as the Standard Webhooks libraries take it.
public struct WebhookSigner: Sendable {
    private let keys: [SymmetricKey]

    /// A secret that cannot be used, and why.
    public struct BadSecret: Error, CustomStringConvertible {
        public var description: String
    }

    /// Refuses a secret that is not `whsec_` and base64 of at least 24 bytes (naming which one, by position).
    public init(secrets: [String]) throws(BadSecret) {
        guard !secrets.isEmpty else { throw BadSecret(description: "no webhook secret: make one with `photoprep events secret`") }
        keys = try secrets.enumerated().map { index, secret throws(BadSecret) in
            let encoded = secret.hasPrefix("whsec_") ? String(secret.dropFirst(6)) : secret
            guard let bytes = Data(base64Encoded: encoded), bytes.count >= 24 else {
                throw BadSecret(description: "webhook secret \(index + 1): not whsec_ and base64 of at least 24 bytes (make one with `photoprep events secret`)")
            }
            return SymmetricKey(data: bytes)
        }
    }

    /// `webhook-signature` for the event `id` sent at `timestamp` (Unix seconds) with `body`.
    public func signature(id: String, timestamp: Int, body: Data) -> String {
        var content = Data("\(id).\(timestamp).".utf8)
        content.append(body)
        return keys.map { key in
            "v1," + Data(HMAC<SHA256>.authenticationCode(for: content, using: key)).base64EncodedString()
        }.joined(separator: " ")
    }

    /// A new secret: `whsec_` and 32 random bytes in base64.
    public static func newSecret() -> String {
        "whsec_" + SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }.base64EncodedString()
    }
}
