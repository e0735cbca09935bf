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

    /// The cluster of this process, started on first use (on a thread of its own: starting it blocks).
    public static func shared() async throws -> PostgresCluster {
        try await onThread {
            try started.withLock { started in
                if started == nil { started = Result { try PostgresCluster() } }
                return try started!.get()
            }
        }
    }

    /// A cluster of the calling test's own, which it may stop (`stop()`, as `pg_ctl -m immediate` does: every
    /// connection cut) and start again (`start()`, on the same port); `remove()` ends it.
    public static func own() async throws -> PostgresCluster {
        try await onThread { try PostgresCluster(stopAtExit: false) }
    }

    /// Whether the test stops and starts the cluster: then a commit is in the operating system's hands before it is
    /// answered (`synchronous_commit` on: an immediate stop loses none), though never flushed to disk (`fsync` off).
    let stoppable: Bool

    private init(stopAtExit: Bool = true) throws {
        stoppable = !stopAtExit
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
        try start()
        guard stopAtExit else { return }
        PostgresCluster.stopAtExit = (bin, folder, asRoot)
        atexit {
            guard let (bin, folder, asRoot) = PostgresCluster.stopAtExit else { return }
            _ = try? PostgresCluster.run(
                asRoot ? "/usr/sbin/runuser" : "\(bin)/pg_ctl",
                (asRoot ? ["-u", "postgres", "--", "\(bin)/pg_ctl"] : []) + ["-D", folder, "-m", "immediate", "-w", "stop"])
        }
    }

    nonisolated(unsafe) private static var stopAtExit: (String, String, Bool)?

    private var asRoot: Bool { getuid() == 0 }

    /// Starts the cluster's server (again), on its port.
    public func start() throws {
        try run(
            "pg_ctl",
            ["-D", folder, "-l", folder + "/server.log", "-w", "-t", "60", "-o",
             "-p \(port) -k \(folder) -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=\(stoppable ? "on" : "off")"
                + " -c full_page_writes=off -c max_connections=300",
             "start"],
            asRoot: asRoot)
    }

    /// Stops the cluster's server at once (`-m immediate`: its connections cut, no checkpoint).
    public func stop() throws {
        try run("pg_ctl", ["-D", folder, "-m", "immediate", "-w", "stop"], asRoot: asRoot)
    }

    /// Stops the server if it runs, and deletes the cluster's folder.
    public func remove() {
        try? stop()
        try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: folder).deletingLastPathComponent().path)
    }

    /// A new, empty database on the cluster; its URL.
    public func newDatabase() async throws -> String {
        let name = "photoprep_\(getpid())_\(databases.withLock { $0 += 1; return $0 })"
        let (bin, port) = (self.bin, self.port)
        try await onThread {
            try Self.run("\(bin)/psql", ["-h", "127.0.0.1", "-p", String(port), "-U", "photoprep", "-d", "postgres", "-q", "-c", "CREATE DATABASE \(name)"])
        }
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

    /// Runs a tool and waits for it (posix_spawn + waitpid: the server `pg_ctl` leaves running must hold
    /// no pipe of ours, and nothing else may reap the child first).
    @discardableResult
    static func run(_ executable: String, _ arguments: [String]) throws -> String {
        let outputPath = FileManager.default.temporaryDirectory.appendingPathComponent("photoprep-pg-\(UUID().uuidString).out").path
        defer { unlink(outputPath) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // Nothing else of ours goes to the server `pg_ctl` leaves running: not our pipes, and not the socket by
        // which Foundation learns that another child ended (held open by postgres, that child's end would go
        // unnoticed: its test waited forever in `waitUntilExit()`).
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = startingChild {
            let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd"))?.compactMap { Int32($0) } ?? []
            for fd in open where fd > 2 { posix_spawn_file_actions_addclose(&actions, fd) }
            return posix_spawn(&pid, executable, &actions, nil, argv, environ)
        }
        guard spawned == 0 else { throw Failure("\(executable): cannot start: \(String(cString: strerror(spawned)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        let exited = status & 0x7f == 0 && (status >> 8) & 0xff == 0
        guard exited else { throw Failure("\(executable) \(arguments.joined(separator: " ")): \(text)") }
        return text
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}
