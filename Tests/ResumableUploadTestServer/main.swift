// An independent implementation of the IETF resumable-upload draft for the interop tests:
// swift-nio-extras' `NIOResumableUpload` handler (interop versions 3, 5, 6) in front of a plain
// HTTP handler that writes each upload's body to FOLDER/{request path}. Listens on 127.0.0.1:PORT.
//
//   ResumableUploadTestServer PORT FOLDER [PUBLIC-PORT]
//
// PUBLIC-PORT: the port clients reach it at (a proxy in front), for the upload URLs it hands out.
import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import NIOPosix
import NIOResumableUpload

/// Receives one upload as an ordinary request (the resumable-upload handler stitches its pieces
/// together): the body goes to a file, then 201.
final class FileUploadHandler: ChannelDuplexHandler {
    typealias InboundIn = HTTPRequestPart
    typealias OutboundIn = Never
    typealias OutboundOut = HTTPResponsePart

    let folder: URL
    var file: FileHandle?

    init(folder: URL) { self.folder = folder.standardized }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let request):
            let path = (request.path ?? "").split(separator: "?").first.map(String.init) ?? ""
            let url = folder.appendingPathComponent(path, isDirectory: false).standardized
            // OPTIONS: 501, which the resumable-upload handler turns into its own answer (200, Upload-Limit).
            if request.method == .options { return respond(context, .notImplemented) }
            guard request.method == .post, url.path.hasPrefix(folder.path + "/") else { return respond(context, .badRequest) }
            try? FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            _ = FileManager.default.createFile(atPath: url.path + ".partial", contents: nil)
            file = FileHandle(forWritingAtPath: url.path + ".partial")
            target = url
        case .body(let body):
            body.withUnsafeReadableBytes { bytes in try? file?.write(contentsOf: bytes) }
        case .end:
            guard let file, let target else { return }
            try? file.close()
            // Complete: the file appears under its name only now.
            _ = try? FileManager.default.replaceItemAt(target, withItemAt: URL(fileURLWithPath: target.path + ".partial"))
            if !FileManager.default.fileExists(atPath: target.path) {
                try? FileManager.default.moveItem(atPath: target.path + ".partial", toPath: target.path)
            }
            self.file = nil
            respond(context, .created)
        }
    }

    var target: URL?

    private func respond(_ context: ChannelHandlerContext, _ status: HTTPResponse.Status) {
        var response = HTTPResponse(status: status)
        response.headerFields[.contentLength] = "0"
        context.write(wrapOutboundOut(.head(response)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }
}

let arguments = CommandLine.arguments
guard arguments.count == 3 || arguments.count == 4, let port = Int(arguments[1]) else {
    FileHandle.standardError.write(Data("usage: ResumableUploadTestServer PORT FOLDER [PUBLIC-PORT]\n".utf8))
    exit(2)
}
let folder = URL(fileURLWithPath: arguments[2], isDirectory: true)
let publicPort = arguments.count == 4 ? arguments[3] : String(port)
let uploads = HTTPResumableUploadContext(origin: "http://127.0.0.1:\(publicPort)")
let server = try ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
    .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
    .childChannelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
            let sync = channel.pipeline.syncOperations
            try sync.configureHTTPServerPipeline()
            try sync.addHandler(HTTP1ToHTTPServerCodec(secure: false))
            try sync.addHandler(HTTPResumableUploadHandler(context: uploads, handlers: [FileUploadHandler(folder: folder)]))
        }
    }
    .bind(host: "127.0.0.1", port: port)
    .wait()
FileHandle.standardOutput.write(Data("ResumableUploadTestServer: listening on http://127.0.0.1:\(port)\n".utf8))
try server.closeFuture.wait()
