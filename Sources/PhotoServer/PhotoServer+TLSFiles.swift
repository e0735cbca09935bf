extension PhotoServer {
    /// PEM files: the certificate (chain, leaf first) and its private key.
    public struct TLSFiles: Sendable {
        public var certificate: String
        public var key: String

        public init(certificate: String, key: String) {
            self.certificate = certificate
            self.key = key
        }
    }
}
