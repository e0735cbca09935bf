import Hummingbird

/// The request context: Hummingbird's core storage, who is calling, and what the request log line needs
/// from the handler.
struct ServerContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let log = RequestLogEntry()
    /// Who is calling, as `BearerAuthentication` found it: the verified token's caller, or why there is none.
    var identity: Result<Caller, Authenticator.Failure> = .failure(.init(description: "no Authorization header"))
    /// The API's JSON: its rules for request bodies and its encoding of answers.
    var requestDecoder: APIRequestDecoder { APIRequestDecoder() }
    var responseEncoder: APIResponseEncoder { APIResponseEncoder() }

    /// The connection's peer address (nil when it has none, as in-process tests).
    let peer: String?

    init(source: Source) {
        coreContext = .init(source: source)
        peer = source.channel.remoteAddress?.ipAddress
    }
}
