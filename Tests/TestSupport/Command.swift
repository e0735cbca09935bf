public import Foundation

/// The built `photoprep` binary, next to the test bundle.
public let photoprepBinary: URL = Bundle.allBundles.map(\.bundleURL).first { $0.pathExtension == "xctest" }
    .map { $0.deletingLastPathComponent().appendingPathComponent("photoprep") }
    ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("photoprep")

/// What a run of the command printed and how it exited.
public struct CommandResult: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String

    public init(status: Int32, stdout: String, stderr: String) {
        self.status = status
        self.stdout = stdout
        self.stderr = stderr
    }

    /// The `--json` lines of standard output.
    public var jsonLines: [[String: Any]] {
        stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }
}

/// Runs the built `photoprep` binary, as a user would, and waits for it on a thread of its own: never on one of the
/// test process's few threads that every test's async work shares (a test waiting there for a command held up every
/// server running in the process meanwhile).
public func photoprep(_ arguments: [String], environment: [String: String]? = nil) async throws -> CommandResult {
    try await onThread { try photoprepBlocking(arguments, environment: environment) }
}

/// `photoprep`, waiting on the calling thread: for code already on a thread of its own.
public func photoprepBlocking(_ arguments: [String], environment: [String: String]? = nil) throws -> CommandResult {
    let process = Process()
    process.executableURL = photoprepBinary
    process.arguments = arguments
    if let environment { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try launch(process)
    let stdout = out.fileHandleForReading.readDataToEndOfFile()
    let stderr = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return CommandResult(
        status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self), stderr: String(decoding: stderr, as: UTF8.self))
}

/// The built `photoprep` binary running in the background (standard output and error to files).
public final class BackgroundCommand: @unchecked Sendable {
    let process = Process()
    let out: URL
    let err: URL

    public init(_ arguments: [String], environment: [String: String] = [:]) throws {
        out = FileManager.default.temporaryDirectory.appendingPathComponent("bg-\(UUID().uuidString).out")
        err = out.deletingPathExtension().appendingPathExtension("err")
        FileManager.default.createFile(atPath: out.path, contents: nil)
        FileManager.default.createFile(atPath: err.path, contents: nil)
        process.executableURL = photoprepBinary
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        try launch(process)
    }

    public var isRunning: Bool { process.isRunning }

    /// SIGKILL, as a crash would; returns once it is gone.
    public func crash() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// What it printed so far.
    public var stdout: String { (try? String(contentsOf: out, encoding: .utf8)) ?? "" }

    /// Waits up to `timeout` seconds for it to exit (without holding a thread); nil if it is still running.
    public func wait(timeout: TimeInterval) async -> CommandResult? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        guard !process.isRunning else { return nil }
        return CommandResult(status: process.terminationStatus, stdout: stdout, stderr: (try? String(contentsOf: err, encoding: .utf8)) ?? "")
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
        try? FileManager.default.removeItem(at: out)
        try? FileManager.default.removeItem(at: err)
    }
}

/// Starts `process`, no other process of the tests starting meanwhile. On Linux, Foundation learns that
/// a child ended when a socket made for that child closes, and closes the other descriptors in a child
/// as it starts; a child started at the same moment by another thread can inherit that socket — made
/// between listing the descriptors to close and starting — and keep it open, and then the first child's
/// end goes unnoticed for as long as the second one lives: `waitUntilExit()` waits forever. Seen here with
/// ~70 tests starting servers at once: two test threads stuck, and with them every test waiting for one.
public func launch(_ process: Process) throws {
    try startingChild { try process.run() }
}

/// Runs `start`, which starts a child process, holding `launching` (see `launch`) and with no signal blocked on this
/// thread. A child inherits the blocked signals of the thread that starts it, and the tests run on Dispatch's
/// threads, which block them all: a child started from one ignored SIGTERM as no child of a shell does (a python
/// lock holder slept on for its whole minute after `terminate()`, a test thread waiting on it; every python server's
/// stop waited out its grace before SIGKILL).
func startingChild<T>(_ start: () throws -> T) rethrows -> T {
    try launching.withLock {
        var none = sigset_t(), blocked = sigset_t()
        sigemptyset(&none)
        pthread_sigmask(SIG_SETMASK, &none, &blocked)
        defer { pthread_sigmask(SIG_SETMASK, &blocked, nil) }
        return try start()
    }
}

/// Held while any process of the tests starts (`startingChild`).
let launching = NSLock()

/// Waits (polling every 50 ms, at most `seconds`) until `condition` holds; throws if it never does.
public func waitUntil(seconds: Double = 20, _ condition: () throws -> Bool, file: String = #file, line: Int = #line) async throws {
    let deadline = Date().addingTimeInterval(seconds)
    while try !condition() {
        guard Date() < deadline else { throw TestSetupError(message: "\(file):\(line): still not true after \(seconds) s") }
        try await Task.sleep(for: .milliseconds(50))
    }
}
