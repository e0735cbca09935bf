public import ServiceLifecycle

/// Runs the photo jobs as a swift-service-lifecycle `Service`: `photoprep serve` keeps one running
/// beside the HTTP server (`.continuous`: it looks for runnable jobs — new ones, and those whose runner
/// vanished on any machine — every `interval`); `photoprep sync` runs one until nothing is left
/// (`.untilIdle`). On graceful shutdown no job starts any more and the running ones pause their uploads
/// and stay pending: any runner resumes them where they stopped.
public struct PhotoJobRunner: Service {
    public enum Mode: Sendable {
        case continuous(every: Duration)
        case untilIdle
    }

    let jobs: PhotoJobs
    let mode: Mode

    public init(jobs: PhotoJobs, mode: Mode) {
        self.jobs = jobs
        self.mode = mode
    }

    public func run() async throws {
        await withGracefulShutdownHandler {
            switch mode {
            case .untilIdle:
                await jobs.sync()
            case .continuous(let interval):
                while !Task.isCancelled, !Task.isShuttingDownGracefully {
                    await jobs.sync()
                    try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
                }
            }
        } onGracefulShutdown: {
            jobs.requestStop()
        }
    }
}
