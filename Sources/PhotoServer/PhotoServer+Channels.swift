import Hummingbird
import HummingbirdCore
import HummingbirdHTTP2
import NIOCore

/// How the server's connections are built: HTTP/1.1, or TLS with HTTP/2, each request with its connection at hand.
extension PhotoServer {
    /// HTTP/1.1; with a certificate, over TLS, and HTTP/2 to clients that offer it (ALPN `h2`) — Hummingbird's
    /// `HTTP2UpgradeChannel`, which answers HTTP/1.1 over TLS to the others.
    static func server(
        certificate: ServerCertificate?, handshakeTimeout: Duration, idleTimeout: Duration, connections: ConnectionCap,
        fromMemory: @escaping @Sendable () -> MediaOnEventLoop
    ) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in
            // A connection that completes no request part for `idleTimeout` is closed: one that sends nothing,
            // and one whose headers never end (a slow-loris, however many bytes it trickles); a slow upload's
            // body parts count, and `BodyPace` cuts one that trickles; any other request must arrive whole within it
            // (`RequestBodyDeadline`).
            let http1 = HTTP1Channel.Configuration(idleTimeout: TimeAmount(idleTimeout))
            guard let certificate else {
                let channel = MediaOnEventLoop.Channel(
                    base: HTTP1Channel(responder: connected(responder), configuration: http1), handler: fromMemory, bodyDeadline: TimeAmount(idleTimeout))
                return ConnectionCap.Limited(base: channel, cap: connections)
            }
            let http2 = try HTTP2UpgradeChannel(
                tlsConfiguration: certificate.tlsConfiguration(),
                configuration: .init(idleTimeout: idleTimeout, streamConfiguration: http1),
                responder: connected(responder))
            return ConnectionCap.Limited(base: TLSHandshakeDeadline(base: http2, timeout: handshakeTimeout), cap: connections)
        }
    }

    /// `responder` with the request's connection at hand (`CurrentConnection`): for a draft upload
    /// creation's 104, and to stop reading it after a refusal that left a large body unread.
    static func connected(_ responder: @escaping HTTPChannelHandler.Responder) -> HTTPChannelHandler.Responder {
        { request, writer, channel in
            var handing: ResponseWriter? = consume writer
            let connection = CurrentConnection(channel)
            try await CurrentConnection.$current.withValue(connection) {
                try await responder(request, handing.take()!, channel)
            }
            connection.closeIfAsked()
        }
    }
}
