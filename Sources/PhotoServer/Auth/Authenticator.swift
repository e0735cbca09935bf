public import Foundation
import JWTKit

/// Who is calling: the `sub` of a verified token.
public struct Caller: Sendable, Equatable {
    public var id: String
    /// The token's `name` claim, when it has one (used when the store adds the caller as a user).
    public var displayName: String?
}

/// Verifies `Authorization: Bearer <JWT>` with jwt-kit: HS256 with a shared secret (a single
/// deployment), or RS256/ES256 against a JWKS (Firebase Auth, Auth0, Cognito, Keycloak … any OpenID
/// Connect provider), with the issuer and audience checked when configured. `exp` is required; `sub` is
/// the user id. Only the configured algorithms verify: a token signed `none`, or with another
/// algorithm, or by another key, is refused.
public struct Authenticator: Sendable {
    public enum Keys: Sendable {
        /// HS256 with this secret (at least 32 bytes).
        case sharedSecret(String)
        /// The keys of a JWKS document (its JSON).
        case jwks(String)
    }

    /// Why a request is not authenticated (always answered 401; the reason is logged, never the token).
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    let keys: JWTKeyCollection
    let issuer: String?
    let audience: String?
    /// Clock skew allowed on `exp` and `nbf`.
    let leeway: TimeInterval

    public init(keys: Keys, issuer: String? = nil, audience: String? = nil, leeway: TimeInterval = 30) async throws {
        let collection = JWTKeyCollection()
        switch keys {
        case .sharedSecret(let secret):
            guard secret.utf8.count >= 32 else {
                throw Failure(description: "the HS256 secret must be at least 32 bytes (it has \(secret.utf8.count))")
            }
            await collection.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        case .jwks(let json):
            do { try await collection.add(jwksJSON: json) } catch { throw Failure(description: "the JWKS cannot be read: \(error)") }
        }
        self.keys = collection
        self.issuer = issuer
        self.audience = audience
        self.leeway = leeway
    }

    /// The caller an `Authorization` header value names, verified.
    public func caller(authorization: String?, now: Date = Date()) async throws(Failure) -> Caller {
        guard let authorization, !authorization.isEmpty else { throw Failure(description: "no Authorization header") }
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { throw Failure(description: "the Authorization header is not a Bearer token") }
        let claims: Claims
        do {
            claims = try await keys.verify(String(parts[1]), as: Claims.self)
        } catch {
            throw Failure(description: "the token does not verify: \(error)")
        }
        guard claims.exp.value.addingTimeInterval(leeway) > now else { throw Failure(description: "the token expired at \(claims.exp.value)") }
        if let nbf = claims.nbf, nbf.value.addingTimeInterval(-leeway) > now { throw Failure(description: "the token is not valid before \(nbf.value)") }
        if let issuer, claims.iss?.value != issuer { throw Failure(description: "the token's issuer is \(claims.iss?.value ?? "missing"), not \(issuer)") }
        if let audience, !(claims.aud?.value.contains(audience) ?? false) { throw Failure(description: "the token is not meant for audience \(audience)") }
        guard !claims.sub.value.isEmpty else { throw Failure(description: "the token has an empty subject") }
        return Caller(id: claims.sub.value, displayName: claims.name)
    }

    /// The claims photoprep reads. Checked here rather than in `verify(using:)` so that the failure
    /// says which claim failed.
    struct Claims: JWTPayload {
        var sub: SubjectClaim
        var exp: ExpirationClaim
        var nbf: NotBeforeClaim?
        var iss: IssuerClaim?
        var aud: AudienceClaim?
        var name: String?

        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }
}
