import Foundation
import Synchronization

/// A throwaway PostgreSQL cluster on 127.0.0.1, made with Debian's `postgresql` binaries for this test
/// process (initdb in a temporary folder, fsync off, trust authentication on loopback) and stopped when
/// the process exits. Each test gets a database of its own (`newDatabase()`).
///
/// The services' tests run on it when `PHOTOPREP_TEST_DATABASE=postgres` (`scripts/test.sh` runs them
/// on SQLite, then on PostgreSQL).
public final class PostgresCluster: Sendable {
    public let port: Int
    let folder: String
    let bin: String
    private let databases = Mutex(0)

    /// Whether the services' tests run on PostgreSQL in this process.
    public static var selected: Bool { ProcessInfo.processInfo.environment["PHOTOPREP_TEST_DATABASE"] == "postgres" }

    private static let started = Mutex<Result<PostgresCluster, any Error>?>(nil)

    /// The cluster of this process, started on first use.
    public static func shared() throws -> PostgresCluster {
        try started.withLock { started in
            if started == nil { started = Result { try PostgresCluster() } }
            return try started!.get()
        }
    }

    private init() throws {
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        guard let version = versions.sorted(by: { (Int($0) ?? 0) < (Int($1) ?? 0) }).last else {
            throw Failure("PostgreSQL is not installed (/usr/lib/postgresql): scripts/install-deps.sh --test installs it")
        }
        bin = "/usr/lib/postgresql/\(version)/bin"
        folder = try temporaryFolder().appendingPathComponent("postgres").path
        port = ServerProcess.freePort()
        // initdb and the server refuse to run as root: as root they run as the `postgres` user.
        let asRoot = getuid() == 0
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        if asRoot {
            try Self.run("/bin/chown", ["postgres:postgres", folder, URL(fileURLWithPath: folder).deletingLastPathComponent().path])
        }
        try run("initdb", ["-D", folder, "-U", "photoprep", "--auth=trust", "--locale=C", "--encoding=UTF8", "--no-sync"], asRoot: asRoot)
        try run(
            "pg_ctl",
            ["-D", folder, "-l", folder + "/server.log", "-w", "-t", "60", "-o",
             "-p \(port) -k \(folder) -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300",
             "start"],
            asRoot: asRoot)
        PostgresCluster.stopAtExit = (bin, folder, asRoot)
        atexit {
            guard let (bin, folder, asRoot) = PostgresCluster.stopAtExit else { return }
            _ = try? PostgresCluster.run(
                asRoot ? "/usr/sbin/runuser" : "\(bin)/pg_ctl",
                (asRoot ? ["-u", "postgres", "--", "\(bin)/pg_ctl"] : []) + ["-D", folder, "-m", "immediate", "-w", "stop"])
        }
    }

    nonisolated(unsafe) private static var stopAtExit: (String, String, Bool)?

    /// A new, empty database on the cluster; its URL.
    public func newDatabase() throws -> String {
        let name = "photoprep_\(getpid())_\(databases.withLock { $0 += 1; return $0 })"
        try Self.run("\(bin)/psql", ["-h", "127.0.0.1", "-p", String(port), "-U", "photoprep", "-d", "postgres", "-q", "-c", "CREATE DATABASE \(name)"])
        return url(name)
    }

    public func url(_ database: String) -> String { "postgres://photoprep@127.0.0.1:\(port)/\(database)?sslmode=disable" }

    private func run(_ tool: String, _ arguments: [String], asRoot: Bool) throws {
        if asRoot {
            try Self.run("/usr/sbin/runuser", ["-u", "postgres", "--", "\(bin)/\(tool)"] + arguments)
        } else {
            try Self.run("\(bin)/\(tool)", arguments)
        }
    }

    @discardableResult
    static func run(_ executable: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0 else { throw Failure("\(executable) \(arguments.joined(separator: " ")): \(text)") }
        return text
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}
