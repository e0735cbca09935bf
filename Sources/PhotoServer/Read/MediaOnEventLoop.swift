import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTPTypes

/// Download URLs answered from memory on the connection's event loop, the way a channel handler answers —
/// the most frequent request there is (every image view of every list), and the one Hummingbird's path
/// made slow in the tail: each of its requests crosses from the event loop to Swift's cooperative pool
/// and back, and on a busy core those threads wait for each other's time slices (`Benchmarks/serving.sh`:
/// with this handler a thumbnail's p99 is nginx's order, without it about 2.5× nginx's).
///
/// `MediaRoutes.fromMemory` decides, with the checks and headers `MediaRoutes.serve` uses: a request it
/// cannot answer without waiting (the record or the bytes not in memory, a bearer token, an `Origin`, a
/// wrong token, anything but `GET`/`HEAD /media/…`) goes on to Hummingbird unchanged. A request is answered
/// here only while none before it on the connection is still being answered there, so that pipelined
/// requests keep their order. It sits after Hummingbird's connection-state handler, which sees these
/// requests and answers as any other (idle time, `Connection: close`, graceful shutdown). Each one is logged
/// and counted as `RequestLogMiddleware` does.
///
/// Back-pressure: answers are written here only while the connection is writable (its unsent bytes under the
/// channel's high-water mark), and the connection is not read while it is not — a client that pipelines
/// requests and reads no answer fills its own socket, not the server's memory. A connection that stays
/// unwritable for `stallTimeout` (the idle timeout: its client reads nothing of what it asked for) is closed,
/// whichever path its answers came from.
final class MediaOnEventLoop: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    let media: MediaRoutes
    let metrics: ServerMetrics
    let logger: Logger
    /// How long the connection may stay unwritable before it is closed.
    let stallTimeout: TimeAmount
    private var stall: Scheduled<Void>?
    /// Requests passed on to Hummingbird whose answer has not ended yet.
    private var passedOn = 0
    /// The request being answered here, until its end is read.
    private var answering: Answering?
    /// A read held back while the connection was not writable, issued once it is.
    private var readHeld = false

    private struct Answering {
        var request: HTTPRequest
        var head: HTTPResponse
        var body: ByteBuffer?
        var started: ContinuousClock.Instant
    }

    init(media: MediaRoutes, metrics: ServerMetrics, logger: Logger, stallTimeout: TimeAmount = .seconds(60)) {
        self.media = media
        self.metrics = metrics
        self.logger = logger
        self.stallTimeout = stallTimeout
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let request):
            let started = ContinuousClock.now
            if passedOn == 0, context.channel.isWritable, let (head, body) = media.fromMemory(request) {
                answering = Answering(request: request, head: head, body: body, started: started)
                return
            }
            passedOn += 1
        case .body:
            if answering != nil { return }
        case .end:
            if let answering {
                self.answering = nil
                answer(answering, context: context)
                return
            }
        }
        context.fireChannelRead(data)
    }

    func read(context: ChannelHandlerContext) {
        guard context.channel.isWritable else {
            readHeld = true
            return
        }
        context.read()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            stall?.cancel()
            stall = nil
            if readHeld {
                readHeld = false
                context.read()
            }
        } else if stall == nil {
            let channel = context.channel
            stall = context.eventLoop.scheduleTask(in: stallTimeout) { channel.close(promise: nil) }
        }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        stall?.cancel()
        stall = nil
        context.fireChannelInactive()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { passedOn = max(0, passedOn - 1) }
        context.write(data, promise: promise)
    }

    private func answer(_ answering: Answering, context: ChannelHandlerContext) {
        var head = answering.head
        head.headerFields.append(HTTPField(name: .date, value: HTTPDate.format(Date())))
        head.headerFields.append(HTTPField(name: .server, value: "photoprep"))
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if let body = answering.body { context.write(wrapOutboundOut(.body(body)), promise: nil) }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)

        var logger = self.logger  // Hummingbird's requests carry their id in their logger's metadata
        logger[metadataKey: "hb.request.id"] = .stringConvertible(RequestID())
        RequestLogMiddleware.record(
            method: answering.request.method.rawValue, path: answering.request.path.map { String($0.prefix { $0 != "?" }) } ?? "",
            status: head.status.code, bytes: 0, user: nil, started: answering.started, logger: logger, metrics: metrics)
    }

    /// `base`'s connections (HTTP/1.1) with a `MediaOnEventLoop` after Hummingbird's connection-state handler,
    /// and before it a `RequestBodyDeadline` of `bodyDeadline`.
    struct Channel<Base: ServerChildChannel>: ServerChildChannel {
        typealias Value = Base.Value
        let base: Base
        let handler: @Sendable () -> MediaOnEventLoop
        var bodyDeadline: TimeAmount = .seconds(60)

        func setup(channel: any NIOCore.Channel, logger: Logger) -> EventLoopFuture<Value> {
            base.setup(channel: channel, logger: logger).flatMapThrowing { value in
                let pipeline = channel.pipeline.syncOperations
                let state = try pipeline.handler(type: HTTPConnectionStateHandler.self)
                try pipeline.addHandler(handler(), position: .after(state))
                try pipeline.addHandler(RequestBodyDeadline(limit: bodyDeadline), position: .after(state))
                return value
            }
        }

        func handle(value: Value, logger: Logger) async {
            await base.handle(value: value, logger: logger)
        }
    }
}
