public import Logging

/// swift-log's `StreamLogHandler`, with its metadata formatted when a line is written rather than each
/// time it changes. Hummingbird gives every request's logger a request id; `StreamLogHandler` formats all
/// of its metadata again on every such change — 3 % of a thumbnail's answer, for lines that the log
/// level mostly drops. Here the metadata is kept as it is and handed to the stream handler with the line,
/// which then writes exactly what it writes on its own.
public struct ServerLogHandler: LogHandler {
    private var stream: StreamLogHandler
    public var metadata: Logger.Metadata = [:]

    /// Lines at `level` and above, to standard error.
    public init(label: String, level: Logger.Level) {
        stream = StreamLogHandler.standardError(label: label)
        stream.logLevel = level
    }

    public var logLevel: Logger.Level {
        get { stream.logLevel }
        set { stream.logLevel = newValue }
    }

    public var metadataProvider: Logger.MetadataProvider? {
        get { stream.metadataProvider }
        set { stream.metadataProvider = newValue }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var event = event
        if !metadata.isEmpty {
            event.metadata = metadata.merging(event.metadata ?? [:]) { _, explicit in explicit }
        }
        stream.log(event: event)
    }
}
