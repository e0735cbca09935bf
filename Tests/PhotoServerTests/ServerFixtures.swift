import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import NIOPosix
import SQLKit
@testable import PhotoPrep
@testable import PhotoServer
import PhotoServices
import TestSupport

/// A server on a data folder that already knows users u1 (Ana), u2 (Ben), u3 (Cleo) and a group u1
/// created (so u1 is its admin, u2 and u3 members): the built binary in a process of its own
/// (`SeededServer`), or the same server's router in the test's process (`SeededRouter`).
protocol Seeded: ServerDataFolder, Sendable {
    var data: URL { get }
    var groupId: String { get }
}

extension Seeded {
    /// The services' database, as the server sees it.
    func database() async throws -> AppDatabase { try await AppDatabase(path: data.appendingPathComponent("app.sqlite").path, role: .server) }

    /// Seeds a new data folder; returns it and the group's id.
    static func seed() async throws -> (data: URL, groupId: String) {
        let data = try temporaryFolder()
        let services = try await PhotoServices(folder: data)
        try await services.users.add(id: "u1", displayName: "Ana")
        try await services.users.add(id: "u2", displayName: "Ben")
        try await services.users.add(id: "u3", displayName: "Cleo")
        let groupId = try await services.groups.createGroup(creator: "u1", name: "Hiking", participants: ["u2", "u3"]).group.id
        await services.database.close()
        return (data, groupId)
    }
}

/// `photoprep serve`, the built binary, on the seeded folder: for what needs a real process and socket
/// (uploads by real clients, kills, signals, schemathesis).
struct SeededServer: Seeded {
    let server: PhotoServerProcess
    let groupId: String
    var data: URL { server.data }

    /// Seeds the data folder, then starts the server off the cooperative pool (its start is waited for
    /// with a blocking poll).
    static func start(arguments: [String] = [], environment: [String: String] = [:]) async throws -> SeededServer {
        let (data, groupId) = try await seed()
        let server = try await onThread { try PhotoServerProcess(data: data, arguments: arguments, environment: environment) }
        return SeededServer(server: server, groupId: groupId)
    }
}

extension SeededServer {
    /// A server on a new PostgreSQL database reached through a relay (`tcp_relay.py`) the test can stop (SIGSTOP:
    /// the database stops answering, nothing closed) and continue.
    static func relayedPostgres(
        _ arguments: [String] = [], environment: [String: String] = [:]
    ) async throws -> (relay: ServerProcess, server: PhotoServerProcess) {
        let cluster = try await PostgresCluster.shared()
        let url = try await cluster.newDatabase()
        let relay = try await postgresRelay(port: ServerProcess.freePort())
        let relayed = url.replacingOccurrences(of: ":\(cluster.port)/", with: ":\(relay.port)/")
        let server = try await onThread { try PhotoServerProcess(arguments: ["--database", relayed] + arguments, environment: environment) }
        return (relay, server)
    }

    /// A relay on `port` to the shared PostgreSQL cluster (again on the port of one that was killed: the database
    /// back after a restart).
    static func postgresRelay(port: Int) async throws -> ServerProcess {
        let cluster = try await PostgresCluster.shared()
        return try await onThread {
            try ServerProcess(port: port, executable: "python3", arguments: [
                projectFolder.appendingPathComponent("Tests/TestSupport/Support/tcp_relay.py").path, String(port), String(cluster.port),
            ])
        }
    }
}

/// The server's router on the seeded folder, in the test's process (HummingbirdTesting: no process, no
/// port): the same routes, middleware, services and thread pools as `serve`, for what needs no real process. Its log is
/// kept in memory (`log`); readiness is probed once. Not here: the sweeper, the readiness loop, the job runner, answers from the event loop, and
/// what only a connection has (its peer's address, idle timeouts, interim answers).
struct SeededRouter: Seeded {
    let data: URL
    let groupId: String
    let api: RouterClient
    let logged: LogCapture
    /// The server itself, for what a test reaches past HTTP (its upload core, its stores).
    let server: PhotoServer

    /// What the server logged so far, a line an event.
    var log: String { logged.text }

    static func run(
        configure: (inout PhotoServer.Configuration) -> Void = { _ in }, _ body: @escaping @Sendable (SeededRouter) async throws -> Void
    ) async throws {
        let (data, groupId) = try await seed()
        var configuration = PhotoServer.Configuration(data: data, keys: .sharedSecret(TestTokens.secret))
        configure(&configuration)
        let logged = LogCapture()
        let logger = Logger(label: "test") { _ in logged.handler }
        let server = try await PhotoServer(configuration: configuration, logger: logger)
        server.cpu.start()
        server.io.start()
        await server.readiness.probe()  // as `run` does before the first request
        do {
            try await Application(responder: server.responder(), logger: logger).test(.router) { client in
                try await body(SeededRouter(data: data, groupId: groupId, api: RouterClient(client: client), logged: logged, server: server))
            }
        } catch {
            try? await server.cpu.shutdownGracefully()
            try? await server.io.shutdownGracefully()
            throw error
        }
        try await server.cpu.shutdownGracefully()
        try await server.io.shutdownGracefully()
    }
}

extension SeededRouter: HTTPCalls {
    func send(_ method: String, _ path: String, headers: [String: String], body: [UInt8]?) async throws -> HTTPExchange {
        try await api.send(method, Self.path(of: path), headers: headers, body: body)
    }
}

/// Calls to the server's HTTP interface, whichever way it runs.
protocol HTTPCalls: Sendable {
    /// `path` is the server's path, or a URL it gave (a tus `Location`), whose path is asked for.
    func send(_ method: String, _ path: String, headers: [String: String], body: [UInt8]?) async throws -> HTTPExchange
}

extension HTTPCalls {
    func send(_ method: String, _ path: String, headers: [String: String] = [:]) async throws -> HTTPExchange {
        try await send(method, path, headers: headers, body: nil)
    }

    /// The path and query of `url` (`http://host:port/files/x` → `/files/x`); a path as it is.
    static func path(of url: String) -> String {
        guard let scheme = url.range(of: "://") else { return url }
        let rest = url[scheme.upperBound...]
        return rest.firstIndex(of: "/").map { String(rest[$0...]) } ?? "/"
    }
}

extension PhotoServerProcess: HTTPCalls {
    func send(_ method: String, _ path: String, headers: [String: String], body: [UInt8]?) async throws -> HTTPExchange {
        try await HTTPExchange.send(method, base + Self.path(of: path), headers: headers, body: body)
    }
}

/// HummingbirdTesting's client of a router, answering as a real exchange would.
struct RouterClient: HTTPCalls {
    let client: any TestClientProtocol

    func send(_ method: String, _ path: String, headers: [String: String], body: [UInt8]?) async throws -> HTTPExchange {
        var fields = HTTPFields()
        for (name, value) in headers { fields[HTTPField.Name(name)!] = value }
        let response = try await client.executeRequest(
            uri: path, method: HTTPRequest.Method(method)!, headers: fields, body: body.map { ByteBuffer(bytes: $0) })
        var answered: [String: String] = [:]
        for field in response.headers { answered[field.name.canonicalName] = field.value }
        return HTTPExchange(status: Int(response.status.code), headers: answered, body: String(buffer: response.body))
    }
}

/// Big real photos made once per test run from LadyBird (TestImages/photos): 5472 × 3648 (20 MP, a
/// full-frame camera's size), the photo repeated across and mirrored down, carrying the EXIF of
/// `orientation/landscape_6.jpg` (orientation 6 — stored sideways — plus GPS, Make and Model).
enum BigPhotos {
    /// Under 5 MiB, so that it may go to every path kind.
    static let twentyMP: String = try! make(name: "20mp.jpg", under: 5 * 1024 * 1024 - 64 * 1024)
    /// Just under 10 MiB: the largest upload the rules allow (album photos).
    /// Just under 10 MiB: the largest upload the rules allow (album photos). Sensor-like grain keeps it
    /// that large at a high quality (the smooth LadyBird alone is 3 MB at 20 MP and quality 95).
    static let twentyMPLarge: String = try! make(name: "20mp-large.jpg", under: 10 * 1024 * 1024 - 64 * 1024, grain: 24)
    /// The same, progressive: its decode reads every scan and holds every coefficient, whatever the build — the
    /// server takes a second or so to prepare it, long enough for a test to act while it does.
    static let twentyMPProgressive: String = try! make(name: "20mp-progressive.jpg", under: 10 * 1024 * 1024 - 64 * 1024, grain: 24, progressive: true)

    /// Made once per machine (they depend only on LadyBird and this code), written atomically.
    static let folder: URL = {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("photoprep-big-photos-v1")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }()

    static func make(name: String, under limit: Int, grain: Int = 0, progressive: Bool = false) throws -> String {
        let path = folder.appendingPathComponent(name).path
        if FileManager.default.fileExists(atPath: path) { return path }
        let source = try Fixture.bytes("photos/ladybird-2560x1600.jpg")
        let photo = try Decoder.decodeJPEG(source, info: SourceInfo.read(source, maxPixels: .max), scale: 1, strict: false).image
        let width = 5472, height = 3648
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        pixels.withUnsafeMutableBufferPointer { out in
            photo.pixels.withUnsafeBufferPointer { src in
                for y in 0..<height {
                    let period = y % (2 * photo.height)
                    let sy = period < photo.height ? period : 2 * photo.height - 1 - period
                    var x = 0
                    while x < width {
                        let run = min(photo.width, width - x)
                        let from = src.baseAddress! + sy * photo.width * 3
                        (out.baseAddress! + (y * width + x) * 3).update(from: from, count: run * 3)
                        x += run
                    }
                }
            }
        }
        if grain > 0 {
            var state: UInt64 = 0x9E37_79B9_7F4A_7C15
            pixels.withUnsafeMutableBufferPointer { out in
                for i in out.indices {
                    state ^= state << 13
                    state ^= state >> 7
                    state ^= state << 17
                    let noise = Int(state % UInt64(2 * grain + 1)) - grain
                    out[i] = UInt8(clamping: Int(out[i]) + noise)
                }
            }
        }
        let image = PixelImage(width: width, height: height, channels: 3, pixels: pixels)
        let exif = try app1(of: Fixture.bytes("orientation/landscape_6.jpg"))
        for quality in stride(from: 100, through: 50, by: progressive ? -3 : -1) {
            let jpeg = progressive
                ? try progressiveJPEG(rgb: image.pixels, width: width, height: height, quality: quality, fullChroma: false)
                : try JPEGWriter.encode(image, quality: quality, settings: .init()) { [UInt8]($0) }
            let tagged = [0xFF, 0xD8] + exif + jpeg.dropFirst(2)
            if tagged.count < limit {
                try Data(tagged).write(to: URL(fileURLWithPath: path), options: .atomic)
                return path
            }
        }
        throw TestSetupError(message: "no quality made a 20 MP JPEG under \(limit) bytes")
    }

    /// The EXIF segment (APP1 "Exif") of a JPEG, marker and length included.
    static func app1(of jpeg: [UInt8]) throws -> [UInt8] {
        var at = 2
        while at + 4 <= jpeg.count, jpeg[at] == 0xFF {
            let length = Int(jpeg[at + 2]) << 8 | Int(jpeg[at + 3])
            if jpeg[at + 1] == 0xE1, jpeg[at + 4..<at + 8].elementsEqual("Exif".utf8) { return Array(jpeg[at..<at + 2 + length]) }
            at += 2 + length
        }
        throw TestSetupError(message: "no EXIF segment")
    }
}

/// What a stored object must be: a JPEG that decodes, fits `preset` (long edge and bytes), carries no
/// EXIF (so no GPS) and is upright (portrait for the sideways-stored photos).
func checkNormalised(_ bytes: [UInt8]?, preset: PrepareOptions.Preset, portrait: Bool? = nil) throws -> PhotoProbe {
    guard let bytes else { throw TestSetupError(message: "nothing stored") }
    let options = PrepareOptions(preset: preset)
    let probe = try PhotoPipeline(preset: preset).probe(bytes)
    guard probe.format == .jpeg, !probe.hasEXIF, !probe.hasGPS, probe.orientation == 1 else {
        throw TestSetupError(message: "stored object is not normalised: \(probe)")
    }
    // Not only by the pipeline's own reading: no EXIF header anywhere in the bytes.
    let exif = Array("Exif\0\0".utf8)
    guard bytes.firstRange(of: exif) == nil else {
        throw TestSetupError(message: "stored object carries an EXIF segment")
    }
    guard max(probe.width, probe.height) <= options.maxEdge, bytes.count < options.maxBytes else {
        throw TestSetupError(message: "stored object does not fit \(preset): \(probe.width)×\(probe.height), \(bytes.count) bytes")
    }
    if let portrait, portrait != (probe.height > probe.width) {
        throw TestSetupError(message: "stored object is not upright: \(probe.width)×\(probe.height)")
    }
    // It decodes, every pixel of it.
    let image = try Decoder.decodeJPEG(bytes, info: SourceInfo.read(bytes, maxPixels: .max), scale: 1, strict: true).image
    guard image.width == probe.width, image.height == probe.height else { throw TestSetupError(message: "decoded size differs") }
    return probe
}

/// Calls to the URL given, as it is (a `Location` the server answered with).
struct AbsoluteURLs: HTTPCalls {
    func send(_ method: String, _ url: String, headers: [String: String], body: [UInt8]?) async throws -> HTTPExchange {
        try await HTTPExchange.send(method, url, headers: headers, body: body)
    }
}
