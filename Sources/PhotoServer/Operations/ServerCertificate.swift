import Logging
import NIOCore
import NIOSSL
import ServiceLifecycle
import Synchronization
import UnixSignals

/// The certificate and private key the server speaks TLS with (`--tls-cert`, `--tls-key`), read again on
/// SIGHUP: a renewed certificate needs no restart. A NIOSSL context keeps the certificate it was made
/// with, and Hummingbird makes one context for the server; so the context asks here for the pair read
/// last on every handshake, through NIOSSL's `sslContextCallback` (its hook for choosing a certificate per
/// connection). New connections get the new certificate; connections already open keep theirs.
final class ServerCertificate: Sendable {
    let files: PhotoServer.TLSFiles
    private let pair: Mutex<NIOSSLContextConfigurationOverride>

    /// Reads both files; throws when either cannot be read or the key is not the certificate's.
    init(files: PhotoServer.TLSFiles) throws {
        self.files = files
        pair = Mutex(try Self.read(files))
    }

    /// Reads both files again; when either cannot be read, or they do not belong together, the pair in use stays.
    func reload() throws {
        let read = try Self.read(files)
        pair.withLock { $0 = read }
    }

    /// The pair in use.
    var current: NIOSSLContextConfigurationOverride { pair.withLock { $0 } }

    /// A server configuration that serves the pair in use on every handshake.
    func tlsConfiguration() -> TLSConfiguration {
        let pair = current
        var configuration = TLSConfiguration.makeServerConfiguration(certificateChain: pair.certificateChain ?? [], privateKey: pair.privateKey!)
        configuration.sslContextCallback = { [self] _, promise in promise.succeed(current) }
        return configuration
    }

    static func read(_ files: PhotoServer.TLSFiles) throws -> NIOSSLContextConfigurationOverride {
        let chain = try NIOSSLCertificate.fromPEMFile(files.certificate)
        guard !chain.isEmpty else { throw Failure(description: "\(files.certificate): no PEM certificate") }
        let key = try NIOSSLPrivateKey(file: files.key, format: .pem)
        var pair = NIOSSLContextConfigurationOverride()
        pair.certificateChain = chain.map { .certificate($0) }
        pair.privateKey = .privateKey(key)
        // A context made with them refuses a key that is not the certificate's (BoringSSL compares them).
        do {
            _ = try NIOSSLContext(configuration: .makeServerConfiguration(certificateChain: pair.certificateChain!, privateKey: pair.privateKey!))
        } catch {
            throw Failure(description: "\(files.certificate) and \(files.key) do not make a certificate and its key: \(error)")
        }
        return pair
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }
}
