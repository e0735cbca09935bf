import HummingbirdCore
import Logging
import NIOCore
import NIOSSL
import NIOTLS

/// Closes a connection whose TLS handshake has not completed within `timeout`. Hummingbird's
/// `HTTP2UpgradeChannel` sets up its idle timeout only once the handshake has chosen HTTP/1.1 or HTTP/2, so
/// a client that connects and never finishes its handshake would keep its connection for ever (measured: still
/// open after 90 s) where plain HTTP closes it after a minute of silence — a slow-loris on the TLS port.
struct TLSHandshakeDeadline<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value
    let base: Base
    let timeout: Duration

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let value = base.setup(channel: channel, logger: logger)
        // Right after the TLS handler, which the base adds at once: the one that sees its handshake complete.
        do {
            let tls = try channel.pipeline.syncOperations.handler(type: NIOSSLServerHandler.self)
            try channel.pipeline.syncOperations.addHandler(Deadline(timeout: TimeAmount(timeout)), position: .after(tls))
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        return value
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }

    /// Closes the channel when `timeout` passes before the handshake completes; leaves once it has.
    final class Deadline: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = NIOAny
        let timeout: TimeAmount
        var closing: Scheduled<Void>?

        init(timeout: TimeAmount) { self.timeout = timeout }

        func handlerAdded(context: ChannelHandlerContext) {
            let channel = context.channel
            closing = context.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
        }

        func handlerRemoved(context: ChannelHandlerContext) {
            closing?.cancel()
        }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            context.fireUserInboundEventTriggered(event)
            if case .handshakeCompleted? = event as? TLSUserEvent {
                context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            }
        }
    }
}
