import AsyncHTTPClient
public import Crypto
public import CryptoExtras
public import Foundation
import Glibc
import NIOCore
import NIOHTTP1

/// `photoprep serve` — the built binary — on 127.0.0.1, on a data folder of its own (or a given one),
/// its standard error (the request log) kept in a file. Stopped when the test ends.
public final class PhotoServerProcess: ServerDataFolder, @unchecked Sendable {
    public let data: URL
    public let port: Int
    public var base: String { "http://127.0.0.1:\(port)" }
    public var endpoint: String { "\(base)/files/" }
    public let logFile: URL
    let arguments: [String]
    let environment: [String: String]
    public private(set) var process = Process()

    /// `arguments`: more `serve` flags; `environment`: added to the process environment (the HS256
    /// secret is `TestTokens.secret` unless given).
    public init(data: URL? = nil, port: Int? = nil, arguments: [String] = [], environment: [String: String] = [:]) throws {
        self.data = try data ?? temporaryFolder()
        self.port = port ?? ServerProcess.freePort()
        logFile = self.data.deletingLastPathComponent().appendingPathComponent("serve-\(UUID().uuidString).log")
        self.arguments = arguments
        self.environment = ["PHOTOPREP_JWT_SECRET": TestTokens.secret].merging(environment) { $1 }
        try start()
    }

    /// Starts the server (again) on the same port and data folder; returns once it accepts connections.
    public func start() throws {
        process = Process()
        process.executableURL = photoprepBinary
        process.arguments = ["serve", "--data", data.path, "--port", String(port)] + arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        if !FileManager.default.fileExists(atPath: logFile.path) { _ = FileManager.default.createFile(atPath: logFile.path, contents: nil) }
        let handle = try FileHandle(forWritingTo: logFile)
        handle.seekToEndOfFile()
        process.standardError = handle
        process.standardOutput = handle
        let before = log.components(separatedBy: "listening on").count
        try launch(process)
        let deadline = Date().addingTimeInterval(30)
        // Its own "listening on" line, then a connection: a bare connect could meet something else (or,
        // under heavy load, the connecting socket itself) on the port.
        while log.components(separatedBy: "listening on").count == before || !ServerProcess.accepts(port: port) {
            guard Date() < deadline, process.isRunning else {
                stop()
                throw TestSetupError(message: "photoprep serve did not start on 127.0.0.1:\(port): \(self.log)")
            }
            usleep(20_000)
        }
    }

    /// What the server wrote to standard output and standard error (its request log).
    public var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    /// Kills the server at once (SIGKILL), as a crash would.
    public func kill() {
        guard process.isRunning else { return }
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// SIGTERM, and waits up to `timeout` seconds: the exit status and how long it took (nil: still running).
    public func terminate(timeout: TimeInterval = 15) -> (status: Int32, seconds: Double)? {
        let started = Date()
        process.terminate()
        while process.isRunning && Date().timeIntervalSince(started) < timeout { usleep(10_000) }
        guard !process.isRunning else { return nil }
        return (process.terminationStatus, Date().timeIntervalSince(started))
    }

    /// The server's peak resident memory so far (VmHWM), in KiB.
    public var peakRSSKiB: Int? {
        guard process.isRunning, let status = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8) else {
            return nil
        }
        return status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }
            .flatMap { Int($0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") }
    }

    public func stop() {
        stopProcess(process, grace: 10)
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: data)
        try? FileManager.default.removeItem(at: logFile)
    }
}

/// Tokens as an identity provider would issue them, minted here with swift-crypto (independently of
/// the server's jwt-kit): HS256 with the test secret, ES256 with a key whose JWKS the server is given.
public enum TestTokens {
    public static let secret = "photoprep-test-secret-0123456789abcdef"

    /// An HS256 signature over `header` (the right one unless a test forges another) and the claims.
    public static func hs256(
        sub: String, expires: Date = Date().addingTimeInterval(3600), secret: String = secret, claims: [String: Any] = [:],
        header: [String: Any] = ["alg": "HS256", "typ": "JWT"]
    ) -> String {
        let signingInput = encode(header) + "." + encode(payload(sub: sub, expires: expires, claims: claims))
        let mac = HMAC<SHA256>.authenticationCode(for: Data(signingInput.utf8), using: SymmetricKey(data: Data(secret.utf8)))
        return signingInput + "." + base64url(Data(mac))
    }

    public static func es256(
        sub: String, key: P256.Signing.PrivateKey, kid: String, expires: Date = Date().addingTimeInterval(3600), claims: [String: Any] = [:]
    ) throws -> String {
        let header = ["alg": "ES256", "typ": "JWT", "kid": kid]
        let signingInput = encode(header) + "." + encode(payload(sub: sub, expires: expires, claims: claims))
        let signature = try key.signature(for: Data(signingInput.utf8))
        return signingInput + "." + base64url(signature.rawRepresentation)
    }

    /// A JWKS document with the public half of `key`.
    public static func jwks(_ key: P256.Signing.PrivateKey, kid: String) -> String {
        let raw = key.publicKey.rawRepresentation  // x || y
        let jwk: [String: String] = [
            "kty": "EC", "crv": "P-256", "alg": "ES256", "use": "sig", "kid": kid,
            "x": base64url(raw.prefix(32)), "y": base64url(raw.suffix(32)),
        ]
        let data = try! JSONSerialization.data(withJSONObject: ["keys": [jwk]], options: [.sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }

    /// An RS256 token (what Firebase, Auth0, Cognito issue), with `header` added to `alg`, `typ`, `kid`.
    public static func rs256(
        sub: String, key: _RSA.Signing.PrivateKey, kid: String, expires: Date = Date().addingTimeInterval(3600), claims: [String: Any] = [:]
    ) throws -> String {
        let header = ["alg": "RS256", "typ": "JWT", "kid": kid]
        let signingInput = encode(header) + "." + encode(payload(sub: sub, expires: expires, claims: claims))
        let signature = try key.signature(for: SHA256.hash(data: Data(signingInput.utf8)), padding: .insecurePKCS1v1_5)
        return signingInput + "." + base64url(signature.rawRepresentation)
    }

    /// A JWKS document with the public halves of `keys` (EC P-256 and RSA), each with its `kid`.
    public static func jwks(ec: [(P256.Signing.PrivateKey, String)] = [], rsa: [(_RSA.Signing.PrivateKey, String)] = []) throws -> String {
        var keys: [[String: String]] = ec.map { key, kid in
            let raw = key.publicKey.rawRepresentation
            return ["kty": "EC", "crv": "P-256", "alg": "ES256", "use": "sig", "kid": kid, "x": base64url(raw.prefix(32)), "y": base64url(raw.suffix(32))]
        }
        for (key, kid) in rsa {
            let primitives = try key.publicKey.getKeyPrimitives()
            keys.append(["kty": "RSA", "alg": "RS256", "use": "sig", "kid": kid, "n": base64url(primitives.modulus), "e": base64url(primitives.publicExponent)])
        }
        let data = try JSONSerialization.data(withJSONObject: ["keys": keys], options: [.sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }

    /// A token with `alg: none` (no signature), as an attacker would try.
    public static func unsigned(sub: String) -> String {
        encode(["alg": "none", "typ": "JWT"]) + "." + encode(payload(sub: sub, expires: Date().addingTimeInterval(3600), claims: [:])) + "."
    }

    static func payload(sub: String, expires: Date, claims: [String: Any]) -> [String: Any] {
        var payload: [String: Any] = ["sub": sub, "exp": Int(expires.timeIntervalSince1970), "iat": Int(Date().timeIntervalSince1970)]
        payload.merge(claims) { $1 }
        return payload
    }

    static func encode(_ object: [String: Any]) -> String {
        base64url(try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
    }

    static func base64url(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

/// A raw HTTP exchange, for protocol tests that need to send what a well-behaved client would not.
public struct HTTPExchange: Sendable {
    public var status: Int
    public var headers: [String: String]
    public var body: String

    public init(status: Int, headers: [String: String], body: String) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public func header(_ name: String) -> String? { headers[name.lowercased()] }

    public static func send(
        _ method: String, _ url: String, headers: [String: String] = [:], body: [UInt8]? = nil, timeout: Duration = .seconds(60)
    ) async throws -> HTTPExchange {
        var request = HTTPClientRequest(url: url)
        request.method = HTTPMethod(rawValue: method)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
        let (seconds, attoseconds) = timeout.components
        let response = try await HTTPClient.shared.execute(request, timeout: .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000))
        let payload = try await response.body.collect(upTo: 1 << 20)
        var fields: [String: String] = [:]
        for header in response.headers { fields[header.name.lowercased()] = header.value }
        return HTTPExchange(status: Int(response.status.code), headers: fields, body: String(buffer: payload))
    }
}

/// Runs blocking work (waiting for a process, CPU-heavy fixtures) on a thread of its own, so that it
/// never holds one of the few threads of Swift's cooperative pool: every test in the process shares
/// them, and a test waiting a minute for a client there would starve the others' uploads and timers.
public func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

/// Runs one of the Python scripts in Support/ with the project's virtual environment, and waits.
public func runSupportScript(_ name: String, _ arguments: [String], environment: [String: String] = [:]) async throws -> CommandResult {
    let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Support/\(name)").path
    return try await runSupportCommand("python3", [script] + arguments, environment: environment)
}

/// Runs a command found on the test servers' PATH (the project's `.venv/bin` first), and waits.
public func runSupportCommand(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) async throws -> CommandResult {
    try await onThread { try runSupportCommandBlocking(executable, arguments, environment: environment) }
}

/// `runSupportCommand` on the calling thread: for a synchronous poll (`waitUntil`) or a `defer`.
public func runSupportCommandBlocking(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws -> CommandResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = [executable] + arguments
    process.environment = testServerEnvironment.merging(environment) { $1 }
    // Standard error to a file: reading two pipes in turn could stall a chatty command.
    let errFile = FileManager.default.temporaryDirectory.appendingPathComponent("command-\(UUID().uuidString).err")
    _ = FileManager.default.createFile(atPath: errFile.path, contents: nil)
    defer { try? FileManager.default.removeItem(at: errFile) }
    let out = Pipe()
    process.standardOutput = out
    process.standardError = try FileHandle(forWritingTo: errFile)
    try launch(process)
    let stdout = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return CommandResult(
        status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
        stderr: (try? String(contentsOf: errFile, encoding: .utf8)) ?? "")
}

/// A plain TCP connection to 127.0.0.1, for requests no HTTP client would send: a body that stops
/// half-way and a connection held open.
public final class RawConnection: @unchecked Sendable {
    let fd: Int32

    public init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard connected else {
            close(fd)
            throw TestSetupError(message: "cannot connect to 127.0.0.1:\(port)")
        }
    }

    public func send(_ bytes: [UInt8]) throws {
        var done = 0
        while done < bytes.count {
            let n = bytes[done...].withUnsafeBytes { Foundation.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw TestSetupError(message: "send failed: \(String(cString: strerror(errno)))") }
            done += n
        }
    }

    public func send(_ text: String) throws { try send(Array(text.utf8)) }

    /// Sends `total` bytes in 64 KiB pieces; returns how many went out before the peer closed the
    /// connection, or stopped taking any for 5 s (all of them when it read everything).
    public func sendUntilClosed(total: Int) async throws -> Int {
        try await onThread {
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(self.fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            let piece = [UInt8](repeating: 0x5A, count: 65536)
            var sent = 0
            while sent < total {
                let n = piece.withUnsafeBytes { Foundation.send(self.fd, $0.baseAddress, min($0.count, total - sent), Int32(MSG_NOSIGNAL)) }
                guard n > 0 else { break }
                sent += n
            }
            return sent
        }
    }

    /// Every byte that arrives until none has for `idle` seconds (or the connection closes).
    public func receiveAll(idle: TimeInterval) async throws -> [UInt8] {
        try await onThread {
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65536)
            var poll = pollfd(fd: self.fd, events: Int16(POLLIN), revents: 0)
            while Glibc.poll(&poll, 1, Int32(idle * 1000)) > 0 {
                let n = recv(self.fd, &buffer, buffer.count, 0)
                if n <= 0 { break }
                received += buffer[..<n]
            }
            return received
        }
    }

    /// Whether the server closed the connection (nothing more to read, and the end of the stream reached).
    public var peerClosed: Bool {
        var poll = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard Glibc.poll(&poll, 1, 0) > 0 else { return false }
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) <= 0
    }

    /// What arrives until the connection closes or `timeout` passes without a byte (waited for on a
    /// thread of its own, not on one of the few that run the tests).
    public func receive(timeout: TimeInterval) async throws -> String {
        try await onThread { self.receiveBlocking(timeout: timeout) }
    }

    private func receiveBlocking(timeout: TimeInterval) -> String {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        var poll = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while Glibc.poll(&poll, 1, Int32(timeout * 1000)) > 0 {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { break }
            received += buffer[..<n]
            // One response is enough once its headers and (for these tests) its short body are in.
            if let text = String(validating: received, as: UTF8.self), let end = text.range(of: "\r\n\r\n") {
                let length = text[..<end.lowerBound].split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
                if text.utf8.count - text.utf8.distance(from: text.startIndex, to: end.upperBound) >= length { break }
            }
        }
        return String(decoding: received, as: UTF8.self)
    }

    deinit { close(fd) }
}

/// SIGTERM, then SIGKILL if `process` still runs after `grace` seconds; returns once it has ended.
public func stopProcess(_ process: Process, grace: Double) {
    guard process.isRunning else { return }
    process.terminate()
    let deadline = Date().addingTimeInterval(grace)
    while process.isRunning && Date() < deadline { usleep(10_000) }
    if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
    process.waitUntilExit()
}
