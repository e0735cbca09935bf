import Logging
import Synchronization

/// The log of a server running in the test's process, kept in memory: a line an event (level, message, metadata).
final class LogCapture: Sendable {
    private let lines = Mutex<[String]>([])

    var text: String { lines.withLock { $0.joined(separator: "\n") } }

    /// A handler writing here, for `Logger(label:factory:)`.
    var handler: Handler { Handler(capture: self) }

    struct Handler: LogHandler {
        let capture: LogCapture
        var logLevel: Logger.Level = .info
        var metadata: Logger.Metadata = [:]

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let fields = metadata.merging(event.metadata ?? [:]) { $1 }.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            let line = (["\(event.level)", "\(event.message)"] + fields).joined(separator: " ")
            capture.lines.withLock { $0.append(line) }
        }
    }
}
