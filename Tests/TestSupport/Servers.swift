import AsyncHTTPClient
public import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

/// A process started by a test on 127.0.0.1 and stopped when the test ends.
public final class ServerProcess: @unchecked Sendable {
    public let port: Int
    let process = Process()

    public init(port: Int, executable: String, arguments: [String]) throws {
        self.port = port
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [executable] + arguments
        process.environment = testServerEnvironment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try launch(process)
        // Generous: several Python servers importing their frameworks at once on two busy cores are slow to listen;
        // one that fails exits, and that is seen at once.
        let deadline = Date().addingTimeInterval(90)
        while !Self.accepts(port: port) {
            guard Date() < deadline, process.isRunning else {
                stop()
                throw TestSetupError(message: "\(executable) did not start listening on 127.0.0.1:\(port)")
            }
            usleep(20_000)
        }
    }

    /// SIGTERM, then SIGKILL if it is still running after two seconds (the Python servers wait for
    /// keep-alive connections on SIGTERM).
    public func stop() {
        stopProcess(process, grace: 2)
    }

    deinit { stop() }

    /// The process, for signals (SIGSTOP makes it stop answering without closing its connections).
    public var processIdentifier: Int32 { process.processIdentifier }

    public static func accepts(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    /// Ports handed out by `freePort` in this process: never handed out twice.
    private static let handedOut = Mutex<Set<Int>>([])

    /// A port nothing listens on right now, and one this process has not handed out before (the kernel
    /// may give a port just released to the next bind: two servers asked for in a row could otherwise
    /// get the same one, and the second would "start" by finding the first listening there).
    public static func freePort() -> Int {
        while true {
            let port = kernelChosenPort()
            if handedOut.withLock({ $0.insert(port).inserted }) { return port }
        }
    }

    /// Binds to port 0 and reads what the kernel chose.
    private static func kernelChosenPort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        return bindLoopback(fd) ?? 0
    }

    /// Binds `fd` to a port of the kernel's choosing on 127.0.0.1; returns the port (nil: bind failed).
    static func bindLoopback(_ fd: Int32) -> Int? {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        return bound ? Int(UInt16(bigEndian: address.sin_port)) : nil
    }
}

/// A port held by this process: a socket listening on 127.0.0.1 until the listener is released.
public final class LoopbackListener {
    public let port: Int
    private let fd: Int32

    public init() throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard let port = ServerProcess.bindLoopback(fd), listen(fd, 1) == 0 else {
            close(fd)
            throw TestSetupError(message: "cannot listen on 127.0.0.1")
        }
        self.port = port
    }

    deinit { close(fd) }
}

/// The project's folder (the checkout this file is in).
public let projectFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// The environment of the servers the tests start: the project's virtual environment `.venv/bin`
/// (made by `scripts/install-deps.sh --test`) first on PATH, so its Python and its servers are found
/// whatever the system's `python3` is.
let testServerEnvironment: [String: String] = {
    var environment = ProcessInfo.processInfo.environment
    let venv = projectFolder.appendingPathComponent(".venv/bin").path
    environment["PATH"] = venv + ":" + (environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin")
    environment.removeValue(forKey: "PYTHONHOME")
    return environment
}()

public struct TestSetupError: Error, CustomStringConvertible {
    public var message: String
    public init(message: String) { self.message = message }
    public var description: String { message }
}

/// The `resumable-upload` tus server (PyPI), with its files in a temporary folder.
public final class TusServer: @unchecked Sendable {
    public let folder: URL
    public private(set) var server: ServerProcess
    public let port: Int
    public var endpoint: String { "http://127.0.0.1:\(port)/files/" }

    /// `port`: a given port (e.g. one a client was already told about), else a free one.
    public init(maxSize: Int = 5 * 1024 * 1024, port: Int? = nil) throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("tus-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        self.port = port ?? ServerProcess.freePort()
        self.maxSize = maxSize
        server = try Self.start(port: self.port, folder: folder, maxSize: maxSize)
    }

    private let maxSize: Int

    private static func start(port: Int, folder: URL, maxSize: Int) throws -> ServerProcess {
        try ServerProcess(port: port, executable: "resumable-upload", arguments: [
            "serve", "--host", "127.0.0.1", "--port", String(port), "--upload-dir", folder.path,
            "--db-path", folder.appendingPathComponent("uploads.db").path, "--max-size", String(maxSize),
            "--upload-expiry", "86400", "--enable-downloads", "--log-level", "ERROR",
        ])
    }

    /// Stops and starts the server on the same port and files.
    public func restart() throws {
        server.stop()
        server = try Self.start(port: port, folder: folder, maxSize: maxSize)
    }

    deinit {
        server.stop()
        try? FileManager.default.removeItem(at: folder)
    }
}

/// The fault-injecting proxy in Support/fault_proxy.py, in front of `upstream`.
public final class FaultProxy: @unchecked Sendable {
    public let server: ServerProcess
    let statsFile: URL
    public var endpoint: String { "http://127.0.0.1:\(server.port)/files/" }

    public init(upstream: Int, faults: [String], port: Int? = nil) throws {
        statsFile = FileManager.default.temporaryDirectory.appendingPathComponent("proxy-\(UUID().uuidString).json")
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Support/fault_proxy.py").path
        let port = port ?? ServerProcess.freePort()
        server = try ServerProcess(port: port, executable: "python3", arguments: [script, String(port), String(upstream), "--stats", statsFile.path] + faults)
    }

    private var stats: [String: Any] { readStats(statsFile) }

    /// Upload data the server accepted through the proxy (PATCH bodies and POST bodies with creation-with-upload).
    public var dataBytes: Int { stats["data_bytes"] as? Int ?? 0 }

    /// Data requests held by `--hold-path` so far (each counted as it arrives).
    public var held: Int { stats["held"] as? Int ?? 0 }

    /// Requests forwarded, by HTTP method.
    public var requests: [String: Int] { stats["by_method"] as? [String: Int] ?? [:] }

    /// Every request that carried upload data, in order: its `Upload-Offset`, body length and the
    /// server's status (0: cut off by `--cut`).
    public var dataLog: [(offset: Int?, length: Int, status: Int)] {
        (stats["data_log"] as? [[String: Any]] ?? []).map { ($0["offset"] as? Int, $0["length"] as? Int ?? 0, $0["status"] as? Int ?? -1) }
    }

    deinit {
        server.stop()
        try? FileManager.default.removeItem(at: statsFile)
    }
}

/// The counters a Python test server in Support/ last wrote (`stats_file.py`); empty before its first request.
func readStats(_ file: URL) -> [String: Any] {
    guard let data = FileManager.default.contents(atPath: file.path),
        let stats = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
    else { return [:] }
    return stats
}

/// Fetches a URL's body (a finished upload, with --enable-downloads).
/// A fresh connection each time (`Connection: close`): the Python servers drop idle keep-alive ones.
public func download(_ url: String) async throws -> [UInt8] {
    var request = HTTPClientRequest(url: url)
    request.headers.add(name: "Connection", value: "close")
    var lastError: (any Error)?
    for _ in 0..<3 {
        do {
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
            guard response.status.code == 200 else { throw TestSetupError(message: "GET \(url): \(response.status)") }
            return Array(buffer: try await response.body.collect(upTo: 64 << 20))
        } catch {
            lastError = error
            try await Task.sleep(for: .milliseconds(200))
        }
    }
    throw lastError!
}

/// `count` bytes of deterministic, incompressible-looking content.
public func testBytes(_ count: Int, seed: UInt64 = 1) -> [UInt8] {
    var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
    return (0..<count).map { _ in
        state ^= state << 13; state ^= state >> 7; state ^= state << 17
        return UInt8(truncatingIfNeeded: state)
    }
}

public func temporaryFolder() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("photoprep-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// tuspyserver (a second tus implementation) under uvicorn, with its files in a temporary folder.
public final class TuspyServer: @unchecked Sendable {
    public let folder: URL
    public let server: ServerProcess
    public var endpoint: String { "http://127.0.0.1:\(server.port)/files/" }

    /// `app`: the FastAPI app in Support/ (`tuspy_app`, or `rules_app` with the storage rules);
    /// `environment`: its settings.
    public init(app: String = "tuspy_app", environment: [String: String] = [:], port: Int? = nil) throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("tuspy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let support = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Support").path
        let port = port ?? ServerProcess.freePort()
        let settings = (["TUS_DIR": folder.path].merging(environment) { $1 }).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        server = try ServerProcess(port: port, executable: "env", arguments: settings + [
            "uvicorn", "\(app):app", "--app-dir", support, "--host", "127.0.0.1", "--port", String(port), "--log-level", "error",
        ])
    }

    /// The stored bytes of the upload at `location` (tuspyserver keeps them under the upload id).
    public func stored(_ location: String) -> [UInt8]? {
        FileManager.default.contents(atPath: folder.appendingPathComponent(URL(string: location)!.lastPathComponent).path).map { [UInt8]($0) }
    }

    deinit {
        server.stop()
        try? FileManager.default.removeItem(at: folder)
    }
}

/// moto's S3 server (PyPI `moto[server]`), in memory, on 127.0.0.1; it does not check signatures.
public final class MotoServer: @unchecked Sendable {
    public let server: ServerProcess
    public var endpoint: String { "http://127.0.0.1:\(server.port)" }

    public init(port: Int? = nil) throws {
        let port = port ?? ServerProcess.freePort()
        server = try ServerProcess(port: port, executable: "moto_server", arguments: ["-H", "127.0.0.1", "-p", String(port)])
    }

    /// The settings an `s3://` destination reads, pointing at `endpoint` (default: this server).
    public func environment(endpoint: String? = nil) -> [String: String] {
        ["AWS_ENDPOINT_URL": endpoint ?? self.endpoint, "AWS_ACCESS_KEY_ID": "test-key", "AWS_SECRET_ACCESS_KEY": "test-secret", "AWS_REGION": "us-east-1"]
    }

    /// Creates a bucket (moto accepts an unsigned CreateBucket).
    public func createBucket(_ name: String) async throws {
        var request = HTTPClientRequest(url: "\(endpoint)/\(name)")
        request.method = .PUT
        request.headers.add(name: "Connection", value: "close")
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        _ = try await response.body.collect(upTo: 1 << 20)
        guard response.status.code == 200 else { throw TestSetupError(message: "CreateBucket \(name): \(response.status)") }
    }

    deinit { server.stop() }
}

/// The hostile tus server in Support/lying_tus.py: it accepts uploads and lies about them (`mode`:
/// full, same, zero, one-short, foreign, redirect, hang).
public final class LyingTusServer: @unchecked Sendable {
    public let server: ServerProcess
    let statsFile: URL
    public var endpoint: String { "http://127.0.0.1:\(server.port)/files/" }

    public init(mode: String) throws {
        statsFile = FileManager.default.temporaryDirectory.appendingPathComponent("lying-\(UUID().uuidString).json")
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Support/lying_tus.py").path
        let port = ServerProcess.freePort()
        server = try ServerProcess(port: port, executable: "python3", arguments: [script, String(port), mode, "--stats", statsFile.path])
    }

    private var stats: [String: Any] { readStats(statsFile) }

    /// Body bytes the server received, in all requests.
    public var dataBytes: Int { stats["data_bytes"] as? Int ?? 0 }
    /// Requests by HTTP method.
    public var requests: [String: Int] { stats["by_method"] as? [String: Int] ?? [:] }
    /// Requests that carried an `Authorization` header, by the host they were sent to.
    public var credentialsTo: [String: Int] { stats["credentials_to"] as? [String: Int] ?? [:] }

    deinit {
        server.stop()
        try? FileManager.default.removeItem(at: statsFile)
    }
}

/// An identity provider's key endpoints (Support/jwks_server.py): its JWKS and OpenID configuration,
/// served from a folder the test rewrites (rotating keys, taking the provider down), counting fetches.
public final class KeyServer: @unchecked Sendable {
    public let server: ServerProcess
    public let folder: URL
    let statsFile: URL
    public var base: String { "http://127.0.0.1:\(server.port)" }
    public var jwksURL: String { base + "/jwks.json" }

    public init(jwks: String) throws {
        folder = try temporaryFolder()
        statsFile = folder.appendingPathComponent("stats.json")
        try jwks.write(to: folder.appendingPathComponent("jwks.json"), atomically: true, encoding: .utf8)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Support/jwks_server.py").path
        let port = ServerProcess.freePort()
        server = try ServerProcess(port: port, executable: "python3", arguments: [script, String(port), folder.path, "--stats", statsFile.path])
    }

    /// Publishes another key set (a rotation).
    public func publish(_ jwks: String) throws { try jwks.write(to: folder.appendingPathComponent("jwks.json"), atomically: true, encoding: .utf8) }

    /// The provider down (every answer 503) or back.
    public func setDown(_ down: Bool) throws {
        let marker = folder.appendingPathComponent("down")
        if down { try Data().write(to: marker) } else { try? FileManager.default.removeItem(at: marker) }
    }

    public var jwksFetches: Int { readStats(statsFile)["jwks_fetches"] as? Int ?? 0 }
    public var discoveryFetches: Int { readStats(statsFile)["discovery_fetches"] as? Int ?? 0 }

    deinit {
        server.stop()
        try? FileManager.default.removeItem(at: folder)
    }
}

/// The round-robin TCP load balancer in Support/balancer.py, in front of `backends`.
public final class Balancer: @unchecked Sendable {
    public let server: ServerProcess
    let statsFile: URL
    public var endpoint: String { "http://127.0.0.1:\(server.port)/files/" }

    /// `hold`: once `after` bytes have come from clients (all connections together), nothing more is
    /// forwarded to the backends until `resumeFile` exists.
    public init(backends: [Int], hold: (after: Int, resumeFile: URL)? = nil) throws {
        statsFile = FileManager.default.temporaryDirectory.appendingPathComponent("balancer-\(UUID().uuidString).json")
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Support/balancer.py").path
        let port = ServerProcess.freePort()
        server = try ServerProcess(
            port: port, executable: "python3",
            arguments: [script, String(port)] + backends.map(String.init) + ["--stats", statsFile.path]
                + (hold.map { ["--hold-after", String($0.after), "--resume-file", $0.resumeFile.path] } ?? []))
    }

    private func counts(_ name: String) -> [Int: Int] {
        let values = readStats(statsFile)[name] as? [String: Int] ?? [:]
        return Dictionary(uniqueKeysWithValues: values.compactMap { key, value in Int(key).map { ($0, value) } })
    }

    /// Connections handed to each backend (by port) so far.
    public var connections: [Int: Int] { counts("connections") }
    /// Connections open to each backend now.
    public var open: [Int: Int] { counts("open") }
    /// Bytes forwarded from clients to each backend.
    public var bytesUp: [Int: Int] { counts("bytes_up") }

    deinit {
        server.stop()
        try? FileManager.default.removeItem(at: statsFile)
    }
}

/// The files in TestImages/ (see TestImages/PROVENANCE.md): the one fixture set every test target reads.
public enum Fixture {
    public static let root = projectFolder.appendingPathComponent("TestImages")
    public static func path(_ name: String) -> String { root.appendingPathComponent(name).path }
    public static func bytes(_ name: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: root.appendingPathComponent(name))) }
}
