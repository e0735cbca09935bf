import AsyncHTTPClient
import Foundation
import JWTKit
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle
import Synchronization

/// An identity provider's signing keys at a URL (its JWKS: Auth0, Cognito, Keycloak, Google's for Firebase
/// …), kept current as `KeySetRefresh` decides: fetched at start, again when its `Cache-Control` runs out
/// (the background `run()`, a service of the server), and at once when a token names a key id it lacks —
/// at most once a minute. A failed fetch keeps the last good keys. Only `https://`, or `http://` on the
/// loopback interface (tests, a local mirror).
final class RemoteKeySet: Service, Sendable {
    let url: URL
    private let logger: Logger
    private let state: Mutex<State>

    private struct State {
        var refresh: KeySetRefresh
        var keys: JWTKeyCollection?
        var keyIDs: Set<String> = []
        /// Those waiting for the fetch under way.
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    init(url: URL, logger: Logger) throws(Authenticator.Failure) {
        guard Self.allowed(url) else {
            throw Authenticator.Failure(description: "\(url.absoluteString): key URLs must be https:// (http:// only on 127.0.0.1 or localhost)")
        }
        self.url = url
        self.logger = logger
        state = Mutex(State(refresh: KeySetRefresh(now: .now)))
    }

    static func allowed(_ url: URL) -> Bool {
        guard url.host?.isEmpty == false else { return false }
        return url.scheme == "https" || (url.scheme == "http" && ["127.0.0.1", "localhost", "::1"].contains(url.host ?? ""))
    }

    /// The keys as last fetched, if any fetch succeeded yet.
    var keys: JWTKeyCollection? { state.withLock { $0.keys } }

    func has(_ keyID: String) -> Bool { state.withLock { $0.keyIDs.contains(keyID) } }

    /// A token names `keyID`, which this set lacks: fetches again when `KeySetRefresh` allows, or waits for
    /// the fetch under way; returns at once otherwise.
    func refresh(forUnknown keyID: String) async {
        enum Step { case fetch, wait, nothing }
        let step = state.withLock { state -> Step in
            if state.refresh.unknownKeyID(now: .now) { return .fetch }
            return state.refresh.fetching ? .wait : .nothing
        }
        switch step {
        case .fetch: await fetch()
        case .wait:
            await withCheckedContinuation { continuation in
                state.withLock { state in
                    if state.refresh.fetching { state.waiting.append(continuation) } else { continuation.resume() }
                }
            }
        case .nothing: return
        }
    }

    /// The first fetch (at start).
    func start() async {
        if state.withLock({ $0.refresh.isDue(now: .now) }) { await fetch() }
    }

    /// Fetches again whenever the keys are due, until the server stops.
    func run() async throws {
        while !Task.isCancelled {
            let due = state.withLock { $0.refresh.due }
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(until: max(due, .now + .milliseconds(100)), clock: .continuous) }
            } catch {
                return
            }
            if state.withLock({ $0.refresh.isDue(now: .now) }) { await fetch() }
        }
    }

    private func fetch() async {
        do {
            let (json, cacheControl) = try await Self.get(url.absoluteString)
            let keys = JWTKeyCollection()
            try await keys.add(jwksJSON: json)
            let keyIDs = Self.keyIDs(json)
            let maxAge = cacheControl.flatMap(Self.maxAge)
            finish { state in
                state.refresh.fetched(now: .now, maxAge: maxAge)
                state.keys = keys
                state.keyIDs = keyIDs
            }
            logger.info("signing keys fetched", metadata: ["url": "\(url.absoluteString)", "kids": "\(keyIDs.sorted().joined(separator: ","))"])
        } catch {
            finish { $0.refresh.failed(now: .now) }
            logger.warning("signing keys not fetched; the last good ones stay", metadata: ["url": "\(url.absoluteString)", "reason": "\(error)"])
        }
    }

    private func finish(_ change: (inout State) -> Void) {
        let waiting = state.withLock { state in
            change(&state)
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }

    /// A provider's JSON document (its keys, its OpenID configuration): the body of a 200, and its `Cache-Control`.
    static func get(_ address: String) async throws -> (body: String, cacheControl: String?) {
        var request = HTTPClientRequest(url: address)
        request.headers.add(name: "Accept", value: "application/json")
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 1 << 20)
        guard response.status == .ok else { throw Authenticator.Failure(description: "HTTP \(response.status.code)") }
        return (String(buffer: body), response.headers["Cache-Control"].first)
    }

    /// The `kid`s of a JWKS document's keys.
    static func keyIDs(_ json: String) -> Set<String> {
        struct Document: Decodable {
            struct Key: Decodable { var kid: String? }
            var keys: [Key]
        }
        let document = try? JSONDecoder().decode(Document.self, from: Data(json.utf8))
        return Set(document?.keys.compactMap(\.kid) ?? [])
    }

    /// `max-age` of a `Cache-Control` value.
    static func maxAge(_ cacheControl: String) -> Duration? {
        for directive in cacheControl.split(separator: ",") {
            let parts = directive.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "max-age", let seconds = Int(parts[1]) { return .seconds(seconds) }
        }
        return nil
    }
}
