import Foundation
import JWTKit
import Synchronization

/// The keys held here: the shared secret's, and those of JWKS documents and files — all replaced at once
/// when the files are read again.
final class LocalKeys: Sendable {
    let sources: [Authenticator.Keys]
    private let state = Mutex<(keys: JWTKeyCollection, keyIDs: Set<String>)>((JWTKeyCollection(), []))

    init(sources: [Authenticator.Keys]) {
        self.sources = sources
    }

    var current: (keys: JWTKeyCollection, keyIDs: Set<String>) { state.withLock { $0 } }

    func load() async throws(Authenticator.Failure) {
        let collection = JWTKeyCollection()
        var keyIDs: Set<String> = []
        for source in sources {
            switch source {
            case .sharedSecret(let secret):
                guard secret.utf8.count >= 32 else {
                    throw Authenticator.Failure(description: "the HS256 secret must be at least 32 bytes (it has \(secret.utf8.count))")
                }
                await collection.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
            case .jwks(let json):
                try await Self.add(json, what: "the JWKS", to: collection)
                keyIDs.formUnion(RemoteKeySet.keyIDs(json))
            case .jwksFile(let path):
                guard let json = try? String(contentsOfFile: path, encoding: .utf8) else {
                    throw Authenticator.Failure(description: "\(path): cannot read the JWKS file")
                }
                try await Self.add(json, what: path, to: collection)
                keyIDs.formUnion(RemoteKeySet.keyIDs(json))
            case .jwksURL, .openIDProvider:
                continue
            }
        }
        state.withLock { $0 = (collection, keyIDs) }
    }

    private static func add(_ json: String, what: String, to collection: JWTKeyCollection) async throws(Authenticator.Failure) {
        do {
            try await collection.add(jwksJSON: json)
        } catch {
            throw Authenticator.Failure(description: "\(what) cannot be read as a JWKS: \(error)")
        }
    }
}
