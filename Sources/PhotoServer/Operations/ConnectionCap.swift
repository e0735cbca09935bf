import HummingbirdCore
import Logging
import NIOCore
import Synchronization

/// At most `limit` open connections from one client address: one more is closed as soon as it is
/// accepted, before a byte of it is read — so that one host cannot hold every connection the server
/// has (300 connections holding half-sent headers, say). Trusted proxies (`--trust-proxy`) are not
/// capped: every client behind them shares their address. `limit` 0: no cap.
final class ConnectionCap: Sendable {
    let limit: Int
    let exempt: [AddressRange]
    let metrics: ServerMetrics?
    private let open = Mutex<[String: Int]>([:])

    init(limit: Int, exempt: [AddressRange], metrics: ServerMetrics? = nil) {
        self.limit = limit
        self.exempt = exempt
        self.metrics = metrics
    }

    /// Counts a connection from `address` in; false when the address has `limit` open already (counted in
    /// the refusals metric as `connections`).
    func admit(_ address: String) -> Bool {
        guard limit > 0, !exempt.contains(where: { $0.contains(address) }) else { return true }
        let admitted = open.withLock { open in
            guard open[address, default: 0] < limit else { return false }
            open[address, default: 0] += 1
            return true
        }
        if !admitted { metrics?.refusal("connections") }
        return admitted
    }

    /// A connection counted in by `admit` ended.
    func release(_ address: String) {
        open.withLock { open in
            guard let count = open[address] else { return }
            open[address] = count > 1 ? count - 1 : nil
        }
    }

    /// A server's connections (plain or TLS), each admitted by the cap first.
    struct Limited<Base: ServerChildChannel>: ServerChildChannel {
        typealias Value = Base.Value
        let base: Base
        let cap: ConnectionCap

        func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
            do {
                try channel.pipeline.syncOperations.addHandler(Handler(cap: cap), position: .first)
            } catch {
                return channel.eventLoop.makeFailedFuture(error)
            }
            return base.setup(channel: channel, logger: logger)
        }

        func handle(value: Value, logger: Logger) async {
            await base.handle(value: value, logger: logger)
        }
    }

    /// First in each connection's pipeline: admits the connection when added, releases it when closed.
    final class Handler: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = NIOAny
        let cap: ConnectionCap
        private var counted: String?

        init(cap: ConnectionCap) { self.cap = cap }

        func handlerAdded(context: ChannelHandlerContext) {
            guard let address = context.channel.remoteAddress?.ipAddress else { return }
            if cap.admit(address) {
                counted = address
            } else {
                context.close(promise: nil)
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            end()
            context.fireChannelInactive()
        }

        func handlerRemoved(context: ChannelHandlerContext) { end() }

        private func end() {
            if let counted { cap.release(counted) }
            counted = nil
        }
    }
}
