public import Foundation
import JWTKit
public import Logging
import PhotoFiles
import PhotoServices

/// Verifies `Authorization: Bearer <JWT>` with jwt-kit: HS256 with a shared secret (a single
/// deployment), or RS256/ES256 against JWKS — files, or an identity provider's keys at a URL kept current
/// (`RemoteKeySet`: Firebase Auth, Auth0, Cognito, Keycloak … any OpenID Connect provider, found by
/// discovery) — with the issuer and audience checked when configured. `exp` is required; `sub` is the user
/// id. Only the configured algorithms verify: a token signed `none`, or with another algorithm, or by
/// another key, is refused.
public struct Authenticator: Sendable {
    public enum Keys: Sendable {
        /// HS256 with this secret (at least 32 bytes).
        case sharedSecret(String)
        /// The keys of a JWKS document (its JSON).
        case jwks(String)
        /// The keys of the JWKS file at this path, read again by `reloadFiles()` (SIGHUP).
        case jwksFile(String)
        /// The keys of the JWKS at this URL, fetched and kept current.
        case jwksURL(URL)
        /// The keys of the OpenID Connect provider whose issuer this is (its `jwks_uri`, from
        /// `{issuer}/.well-known/openid-configuration`); tokens must then come from that issuer.
        case openIDProvider(URL)
    }

    /// Why a request is not authenticated (always answered 401; the reason is logged, never the token).
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// The secret's key and those of JWKS documents and files, with their key ids (replaced by `reloadFiles`).
    private let local: LocalKeys
    /// Identity providers' keys at URLs (`run()` them to keep them current).
    let remote: [RemoteKeySet]
    let issuer: String?
    let audience: String?
    /// Firebase's rule: `auth_time` (when the user signed in) must be present and not in the future.
    let requireAuthTime: Bool
    /// Clock skew allowed on `exp` and `nbf`.
    let leeway: TimeInterval
    /// The `alg` a token's header may name: HS256 for the shared secret, the public-key algorithms for JWKS keys.
    /// jwt-kit verifies with the key it finds whatever the header says (an HS256 signature under `"alg": "none"`
    /// verified), so the header is checked first.
    let algorithms: Set<String>

    public init(
        keys: [Keys], issuer: String? = nil, audience: String? = nil, requireAuthTime: Bool = false, leeway: TimeInterval = 30,
        logger: Logger = Logger(label: "photoprep.keys")
    ) async throws {
        var remote: [RemoteKeySet] = []
        var issuer = issuer
        for source in keys {
            switch source {
            case .sharedSecret, .jwks, .jwksFile:
                continue
            case .jwksURL(let url):
                remote.append(try RemoteKeySet(url: url, logger: logger))
            case .openIDProvider(let provider):
                let discovered = try await Self.discover(provider)
                if let issuer, issuer != discovered.issuer {
                    throw Failure(description: "--issuer \(issuer) is not the provider's issuer \(discovered.issuer)")
                }
                issuer = discovered.issuer
                remote.append(try RemoteKeySet(url: discovered.keys, logger: logger))
            }
        }
        for set in remote { await set.start() }
        local = LocalKeys(sources: keys)
        try await local.load()
        self.remote = remote
        self.issuer = issuer
        self.audience = audience
        self.requireAuthTime = requireAuthTime
        self.leeway = leeway
        algorithms = keys.reduce(into: []) { algorithms, source in
            switch source {
            case .sharedSecret: algorithms.insert("HS256")
            case .jwks, .jwksFile, .jwksURL, .openIDProvider: algorithms.formUnion(Self.publicKeyAlgorithms)
            }
        }
    }

    /// The algorithms of JWKS keys that jwt-kit verifies (each key also holds to its own `alg`, when it names one).
    static let publicKeyAlgorithms: Set<String> = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"]

    public init(keys: Keys, issuer: String? = nil, audience: String? = nil, leeway: TimeInterval = 30) async throws {
        try await self.init(keys: [keys], issuer: issuer, audience: audience, leeway: leeway)
    }

    /// OpenID Connect discovery: the provider's issuer (which must be the one asked for) and its `jwks_uri`.
    static func discover(_ provider: URL) async throws(Failure) -> (issuer: String, keys: URL) {
        guard RemoteKeySet.allowed(provider) else {
            throw Failure(description: "\(provider.absoluteString): an issuer must be https:// (http:// only on 127.0.0.1 or localhost)")
        }
        let trimmed = provider.absoluteString.hasSuffix("/") ? String(provider.absoluteString.dropLast()) : provider.absoluteString
        let address = trimmed + "/.well-known/openid-configuration"
        struct Configuration: Decodable {
            var issuer: String
            var jwks_uri: String
        }
        do {
            let configuration = try JSONDecoder().decode(Configuration.self, from: Data(try await RemoteKeySet.get(address).body.utf8))
            guard configuration.issuer == trimmed || configuration.issuer == provider.absoluteString else {
                throw Failure(description: "it names another issuer, \(configuration.issuer)")
            }
            guard let keys = URL(string: configuration.jwks_uri) else { throw Failure(description: "its jwks_uri is not a URL") }
            return (configuration.issuer, keys)
        } catch {
            throw Failure(description: "\(address): not a usable OpenID configuration: \(error)")
        }
    }

    /// The caller an `Authorization` header value names, verified.
    public func caller(authorization: String?, now: Date = Date()) async throws(Failure) -> Caller {
        guard let authorization, !authorization.isEmpty else { throw Failure(description: "no Authorization header") }
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { throw Failure(description: "the Authorization header is not a Bearer token") }
        let token = String(parts[1])
        guard let header = Self.header(ofJWT: token) else { throw Failure(description: "the token is not a JWT") }
        guard let algorithm = header["alg"] as? String, algorithms.contains(algorithm) else {
            throw Failure(description: "the token's algorithm is not one this server accepts (\(algorithms.sorted().joined(separator: ", ")))")
        }
        // RFC 7515 §4.1.11: extensions named critical must be understood, and this server understands none.
        guard header["crit"] == nil else { throw Failure(description: "the token names critical header parameters this server does not know") }
        let claims: Claims
        do {
            claims = try await keySet(keyID: header["kid"] as? String).verify(token, as: Claims.self)
        } catch let failure as Failure {
            throw failure
        } catch {
            // Not jwt-kit's error itself: its description names types of the libraries and addresses in this process.
            throw Failure(description: "the token does not verify: it is malformed, or not signed by a key this server accepts")
        }
        guard claims.exp.value.addingTimeInterval(leeway) > now else { throw Failure(description: "the token expired at \(claims.exp.value)") }
        if let nbf = claims.nbf, nbf.value.addingTimeInterval(-leeway) > now { throw Failure(description: "the token is not valid before \(nbf.value)") }
        if let issuer, claims.iss?.value != issuer { throw Failure(description: "the token's issuer is \(claims.iss?.value ?? "missing"), not \(issuer)") }
        if let audience, !(claims.aud?.value.contains(audience) ?? false) { throw Failure(description: "the token is not meant for audience \(audience)") }
        if requireAuthTime {
            guard let authTime = claims.authTime else { throw Failure(description: "the token has no auth_time") }
            guard Date(timeIntervalSince1970: authTime).addingTimeInterval(-leeway) <= now else { throw Failure(description: "the token's auth_time is in the future") }
        }
        guard !claims.sub.value.isEmpty else { throw Failure(description: "the token has an empty subject") }
        // A user id names folders and is compared as text: only the identifiers storage paths allow (every
        // identity provider's subjects are), never a look-alike that Unicode equates with another user's
        // (U+212A KELVIN SIGN == "K" for Swift's `==`).
        do throws(ServiceError) { _ = try StorageRules.validated(claims.sub.value, "token's subject") } catch { throw Failure(description: "\(error)") }
        return Caller(id: claims.sub.value, displayName: claims.name)
    }

    /// Reads the JWKS files again (SIGHUP): their keys replace those read before; when one cannot be read,
    /// nothing changes.
    public func reloadFiles() async throws {
        try await local.load()
    }

    /// The keys that verify a token whose header names `keyID`: an identity provider's when one has its key id (fetched again, at
    /// most once a minute, when none has it: a rotation), else the secret and the JWKS files.
    private func keySet(keyID: String?) async throws(Failure) -> JWTKeyCollection {
        let (keys, keyIDs) = local.current
        guard !remote.isEmpty, let keyID, !keyIDs.contains(keyID) else { return keys }
        if let set = remote.first(where: { $0.has(keyID) }), let found = set.keys { return found }
        for set in remote { await set.refresh(forUnknown: keyID) }
        if let set = remote.first(where: { $0.has(keyID) }), let found = set.keys { return found }
        throw Failure(description: "no key \(keyID) among the identity provider's keys")
    }

    /// A JWT's header, decoded but not verified (nil when it is not a JSON object): its `alg`, and its `kid` to pick
    /// the keys, read once before verifying.
    static func header(ofJWT token: String) -> [String: Any]? {
        guard let header = token.split(separator: ".", maxSplits: 1).first, let data = Data(base64URL: header) else { return nil }
        return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
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
        /// When the user signed in (Firebase ID tokens).
        var authTime: Double?

        enum CodingKeys: String, CodingKey {
            case sub, exp, nbf, iss, aud, name
            case authTime = "auth_time"
        }

        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }
}
