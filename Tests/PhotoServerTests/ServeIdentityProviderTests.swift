import Crypto
import CryptoExtras
import Foundation
@testable import PhotoServer
import Testing
import TestSupport

/// Identity providers' rotating keys against a key endpoint on 127.0.0.1 (`KeyServer`): keys fetched from a URL and
/// fetched again on a new key id (at most once a minute), removed keys refused, the last good keys kept while the
/// provider is down; OpenID Connect discovery; Firebase ID tokens in Firebase's own shape. The rotation runs on the
/// server's router in the test's process; the rest on the built binary, set up by `serve`'s own flags.
@Suite struct ServeIdentityProviderTests {
    static func me(_ server: any HTTPCalls, _ token: String) async throws -> Int {
        try await ServeAPITests.call(server, "GET", "/v1/me", token: token).status
    }

    @Test func keysAtAURLRotateWithoutARestart() async throws {
        let (a, b) = (P256.Signing.PrivateKey(), P256.Signing.PrivateKey())
        let provider = try KeyServer(jwks: try TestTokens.jwks(ec: [(a, "key-a")]))
        let url = try #require(URL(string: provider.jwksURL))
        try await SeededRouter.run(configure: { $0.keys = [.jwksURL(url)] }) { server in
            #expect(try await Self.me(server, TestTokens.es256(sub: "u1", key: a, kid: "key-a")) == 200)
            #expect(try await Self.me(server, TestTokens.hs256(sub: "u1")) == 401, "with a provider's keys, the shared secret opens nothing")
            #expect(provider.jwksFetches == 1)

            // The provider rotates: key b in, key a out. A token signed with b is accepted at once, without a restart.
            // (The minute of the fetch it makes starts here.)
            let rotated = ContinuousClock.now
            try provider.publish(try TestTokens.jwks(ec: [(b, "key-b")]))
            #expect(try await Self.me(server, TestTokens.es256(sub: "u1", key: b, kid: "key-b")) == 200)
            #expect(provider.jwksFetches == 2)
            #expect(try await Self.me(server, TestTokens.es256(sub: "u1", key: a, kid: "key-a")) == 401, "a removed key")
            #expect(try await Self.me(server, TestTokens.es256(sub: "u1", key: a, kid: "key-b")) == 401, "signed by another key than its kid's")

            // 1,000 tokens naming key ids nobody has, 20 at a time: all 401, and no fetch (one was made less than a minute
            // ago) — on a machine so loaded that a minute passes since the rotation's fetch, one more fetch a minute.
            try await withThrowingTaskGroup(of: Int.self) { group in
                for batch in 0..<50 {
                    for n in 0..<20 {
                        group.addTask { try await Self.me(server, TestTokens.es256(sub: "u1", key: b, kid: "forged-\(batch)-\(n)-\(UUID().uuidString)")) }
                    }
                    for try await status in group.prefix(20) { #expect(status == 401) }
                }
            }
            let minutes = Int((ContinuousClock.now - rotated).components.seconds / 60)
            #expect((2...(2 + minutes)).contains(provider.jwksFetches), "at most one fetch a minute for unknown key ids")
            #expect(try await Self.me(server, TestTokens.es256(sub: "u1", key: b, kid: "key-b")) == 200)
        }
    }

    @Test func theLastGoodKeysStayWhileTheProviderIsDown() async throws {
        let a = P256.Signing.PrivateKey()
        let provider = try KeyServer(jwks: try TestTokens.jwks(ec: [(a, "key-a")]))
        let seeded = try await SeededServer.start(arguments: ["--jwks", provider.jwksURL])
        try provider.setDown(true)
        // A new key id asks the provider, which fails: refused, and the keys it had still work.
        #expect(try await Self.me(seeded.server, TestTokens.es256(sub: "u1", key: P256.Signing.PrivateKey(), kid: "key-new")) == 401)
        #expect(provider.jwksFetches == 2)
        #expect(try await Self.me(seeded.server, TestTokens.es256(sub: "u1", key: a, kid: "key-a")) == 200)
        #expect(seeded.server.log.contains("signing keys not fetched; the last good ones stay"))
    }

    @Test func openIDConnectDiscovery() async throws {
        let a = P256.Signing.PrivateKey()
        let provider = try KeyServer(jwks: try TestTokens.jwks(ec: [(a, "key-a")]))
        let seeded = try await SeededServer.start(arguments: ["--oidc-issuer", provider.base, "--audience", "photoprep"])
        let claims: [String: Any] = ["iss": provider.base, "aud": "photoprep"]
        #expect(try await Self.me(seeded.server, TestTokens.es256(sub: "u1", key: a, kid: "key-a", claims: claims)) == 200)
        var other = claims
        other["iss"] = "https://someone-else.example"
        #expect(try await Self.me(seeded.server, TestTokens.es256(sub: "u1", key: a, kid: "key-a", claims: other)) == 401, "tokens only from the provider's issuer")
        #expect(provider.discoveryFetches == 1 && provider.jwksFetches == 1)
        // Plain http only on the loopback interface; a wrong issuer does not start.
        let folder = try temporaryFolder()
        let refused = try await photoprep(["serve", "--data", folder.path, "--port", "0", "--oidc-issuer", "http://example.com"])
        #expect(refused.status != 0 && refused.stderr.contains("https://"), "\(refused.stderr)")
    }

    /// Firebase ID tokens as Firebase makes them: RS256, `kid` of one of Google's securetoken keys, issuer
    /// `https://securetoken.google.com/{project}`, audience the project, `auth_time`, `user_id`, `firebase`.
    @Test func firebaseIDTokens() async throws {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let provider = try KeyServer(jwks: try TestTokens.jwks(rsa: [(key, "firebase-key-1")]))
        let seeded = try await SeededServer.start(
            arguments: ["--firebase-project", "demo-photoprep"], environment: ["PHOTOPREP_FIREBASE_JWKS_URL": provider.jwksURL])
        let now = Int(Date().timeIntervalSince1970)
        func firebase(_ changes: [String: Any] = [:]) throws -> String {
            var claims: [String: Any] = [
                "iss": "https://securetoken.google.com/demo-photoprep", "aud": "demo-photoprep", "auth_time": now - 600, "user_id": "u1",
                "firebase": ["identities": ["email": ["ana@example.com"]], "sign_in_provider": "password"], "email": "ana@example.com",
                "email_verified": true, "name": "Ana",
            ]
            claims.merge(changes) { $1 }
            return try TestTokens.rs256(sub: "u1", key: key, kid: "firebase-key-1", claims: claims)
        }
        #expect(try await Self.me(seeded.server, firebase()) == 200)
        #expect(try await Self.me(seeded.server, firebase(["aud": "another-project"])) == 401)
        #expect(try await Self.me(seeded.server, firebase(["iss": "https://securetoken.google.com/another-project"])) == 401)
        #expect(try await Self.me(seeded.server, firebase(["auth_time": now + 3600])) == 401, "signed in in the future")
        let noAuthTime = try TestTokens.rs256(sub: "u1", key: key, kid: "firebase-key-1", claims: [
            "iss": "https://securetoken.google.com/demo-photoprep", "aud": "demo-photoprep",
        ])
        #expect(try await Self.me(seeded.server, noAuthTime) == 401, "no auth_time")
        #expect(seeded.server.log.contains("auth_time"))
    }

    @Test func sighupReadsTheKeyFilesAgain() async throws {
        let (a, b) = (P256.Signing.PrivateKey(), P256.Signing.PrivateKey())
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("jwks.json")
        try TestTokens.jwks(ec: [(a, "key-a")]).write(to: file, atomically: true, encoding: .utf8)
        let seeded = try await SeededServer.start(arguments: ["--jwks", file.path])
        let server = seeded.server
        #expect(try await Self.me(server, TestTokens.es256(sub: "u1", key: a, kid: "key-a")) == 200)
        try TestTokens.jwks(ec: [(b, "key-b")]).write(to: file, atomically: true, encoding: .utf8)
        #expect(try await Self.me(server, TestTokens.es256(sub: "u1", key: b, kid: "key-b")) == 401, "not before SIGHUP")
        kill(server.process.processIdentifier, SIGHUP)
        try await waitUntil { server.log.contains("SIGHUP: key files read again") }
        #expect(try await Self.me(server, TestTokens.es256(sub: "u1", key: b, kid: "key-b")) == 200)
        #expect(try await Self.me(server, TestTokens.es256(sub: "u1", key: a, kid: "key-a")) == 401)
        // A file that cannot be read changes nothing.
        try "not json".write(to: file, atomically: true, encoding: .utf8)
        kill(server.process.processIdentifier, SIGHUP)
        try await waitUntil { server.log.contains("SIGHUP: key files not read again") }
        #expect(try await Self.me(server, TestTokens.es256(sub: "u1", key: b, kid: "key-b")) == 200)
    }

    /// `KeySetRefresh`'s decisions on their own.
    @Test func whenKeysAreFetchedAgain() {
        let start = ContinuousClock.now
        var refresh = KeySetRefresh(now: start)
        var fetch = refresh.isDue(now: start)
        #expect(fetch && refresh.fetching)
        fetch = refresh.unknownKeyID(now: start)
        #expect(!fetch, "one fetch at a time")
        refresh.fetched(now: start, maxAge: .seconds(5))
        #expect(refresh.due == start + .seconds(60), "max-age kept at a minute at least")
        fetch = refresh.unknownKeyID(now: start + .seconds(1))
        #expect(fetch, "a new key id right after the start's fetch")
        refresh.fetched(now: start + .seconds(2), maxAge: .seconds(7 * 86_400))
        #expect(refresh.due == start + .seconds(2) + .seconds(86_400), "and a day at most")
        fetch = refresh.unknownKeyID(now: start + .seconds(59))
        #expect(!fetch, "unknown key ids: once a minute")
        fetch = refresh.unknownKeyID(now: start + .seconds(61))
        #expect(fetch)
        refresh.failed(now: start + .seconds(62))
        #expect(!refresh.fetching && refresh.due == start + .seconds(122), "a failure is tried again a minute later")
        fetch = refresh.isDue(now: start + .seconds(100))
        #expect(!fetch)
        fetch = refresh.isDue(now: start + .seconds(122))
        #expect(fetch)
        refresh.fetched(now: start + .seconds(123), maxAge: nil)
        #expect(refresh.due == start + .seconds(123 + 3600), "an hour without Cache-Control")
    }
}
