import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// A request other than an upload must arrive whole — head to end — within `limit` (the idle timeout), or its
/// connection is closed. The idle timeout alone counts silence, so a body trickled a byte at a time kept a
/// connection (and the request's task) for as long as the client liked; an upload's body has `BodyPace` instead.
final class RequestBodyDeadline: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    let limit: TimeAmount
    private var deadline: Scheduled<Void>?

    init(limit: TimeAmount) {
        self.limit = limit
    }

    /// The upload routes (tus, the draft): their bodies are paced by `BodyPace`.
    static func isUpload(_ path: String?) -> Bool {
        guard let path else { return false }
        return path.hasPrefix("/files") || path.hasPrefix("/uploads/") || path.hasPrefix("/resumable/")
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let request):
            deadline?.cancel()
            deadline = nil
            if !Self.isUpload(request.path) {
                let channel = context.channel
                deadline = context.eventLoop.scheduleTask(in: limit) { channel.close(promise: nil) }
            }
        case .end:
            deadline?.cancel()
            deadline = nil
        case .body:
            break
        }
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        context.fireChannelInactive()
    }
}
