import Logging
import ServiceLifecycle
import UnixSignals

/// SIGHUP reads files again — the JWKS files (`Authenticator.reloadFiles`), the TLS certificate and its key
/// (`ServerCertificate.reload`) — so that keys rotated and certificates renewed by replacing their files need
/// no restart. What cannot be read changes nothing, and says so in the log.
struct FileReloader: Service {
    struct Reload: Sendable {
        /// What is read again, for the log.
        var what: String
        /// What stays when it cannot be, for the log.
        var otherwise: String
        var run: @Sendable () async throws -> Void
    }

    let reloads: [Reload]
    let logger: Logger

    func run() async throws {
        for await _ in await UnixSignalsSequence(trapping: .sighup).cancelOnGracefulShutdown() {
            for reload in reloads {
                do {
                    try await reload.run()
                    logger.notice("SIGHUP: \(reload.what) read again")
                } catch {
                    logger.error("SIGHUP: \(reload.what) not read again; \(reload.otherwise)", metadata: ["reason": "\(error)"])
                }
            }
        }
    }
}
