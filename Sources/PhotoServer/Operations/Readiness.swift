import Foundation
import Logging
import PhotoServices
import SQLKit
import ServiceLifecycle
import Synchronization

/// Whether the server can take photos now — what `/health/ready` (and `/health`) answer: the database and
/// the storage each probed every `interval` (a `SELECT 1`; `PhotoStorage.probe`: reachable, writable, room),
/// the results kept. A route reads them and never waits for a dependency: a probe still unanswered after
/// `timeout` counts as a failure at once, so a load balancer asking while the database dies gets its answer
/// and stops sending uploads. Changes are logged (failures at error level, with the detail).
final class Readiness: Service, Sendable {
    enum Dependency: String, CaseIterable, Sendable {
        case database, storage
    }

    /// One dependency's state: whether a probe has answered yet, the last answer's failure (nil: fine), and
    /// when a probe still waiting for its answer was sent.
    struct Check: Sendable {
        var answered = false
        var failure: String?
        var waitingSince: ContinuousClock.Instant?
    }

    /// What the route answers: each dependency's state in a word (`ok`, `unavailable`, `full`, `no answer`).
    struct Report: Sendable, Equatable {
        var states: [Dependency: String]
        var ready: Bool { states.values.allSatisfy { $0 == "ok" } }
        var json: String {
            let parts = Dependency.allCases.map { "\"\($0.rawValue)\":\"\(states[$0] ?? "unknown")\"" }
            return "{\"status\":\"\(ready ? "ok" : "unavailable")\",\(parts.joined(separator: ","))}\n"
        }
    }

    let database: AppDatabase
    let storage: any PhotoStorage
    let interval: Duration
    let timeout: Duration
    let logger: Logger
    private let checks = Mutex<[Dependency: Check]>([:])

    init(database: AppDatabase, storage: any PhotoStorage, interval: Duration = .seconds(2), timeout: Duration = .seconds(2), logger: Logger) {
        self.database = database
        self.storage = storage
        self.interval = interval
        self.timeout = timeout
        self.logger = logger
    }

    func run() async throws {
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            await probe()
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: self.interval) }
        }
    }

    /// Probes both dependencies at once and records what they answered.
    func probe() async {
        await withTaskGroup(of: Void.self) { group in
            for dependency in Dependency.allCases {
                group.addTask { await self.probe(dependency) }
            }
        }
    }

    private func probe(_ dependency: Dependency) async {
        let sent = ContinuousClock.now
        checks.withLock { $0[dependency, default: Check()].waitingSince = sent }
        var problem: (word: String, detail: String)?
        switch dependency {
        case .database:
            do { try await database.read { db in try await db.raw("SELECT 1").run() } } catch { problem = ("unavailable", "\(error)") }
        case .storage:
            do throws(StorageProblem) { try await storage.probe(timeout: timeout) } catch { problem = (error.kind.rawValue, error.detail) }
        }
        // A failure that came only after the timeout (the database's statement deadline closing its connection)
        // is what the route already said while it waited: no answer.
        if let failure = problem, ContinuousClock.now - sent > timeout { problem = ("no answer", failure.detail) }
        let before = checks.withLock { checks in
            defer { checks[dependency] = Check(answered: true, failure: problem?.word) }
            return checks[dependency]?.failure
        }
        if let problem, problem.word != before {
            logger.error("not ready: \(dependency.rawValue) \(problem.word)", metadata: ["detail": "\(problem.detail)"])
        } else if problem == nil, before != nil {
            logger.info("ready again: \(dependency.rawValue) answers")
        }
    }

    /// The last results; before the first probe has answered, that probe is waited for (at most `timeout`
    /// is then counted against it as for any other).
    func report(now: ContinuousClock.Instant = .now) async -> Report {
        if checks.withLock({ $0.isEmpty }) { await probe() }
        let checks = self.checks.withLock { $0 }
        var states: [Dependency: String] = [:]
        for dependency in Dependency.allCases {
            let check = checks[dependency]
            if let since = check?.waitingSince, now - since > timeout {
                states[dependency] = "no answer"
            } else if let check, check.answered {
                states[dependency] = check.failure ?? "ok"
            } else {
                states[dependency] = "unknown"
            }
        }
        return Report(states: states)
    }
}
