import Crypto
import Foundation
import HTTPTypes

/// tus 1.0 (https://tus.io/protocols/resumable-upload): the header names, what the server supports,
/// and the parsing of what a client sends. No I/O here.
enum Tus {
    static let version = "1.0.0"
    static let extensions = "creation,creation-with-upload,termination,checksum,expiration"
    static let checksumAlgorithms = "sha1,sha256"
    static let offsetContentType = "application/offset+octet-stream"

    static let resumable = HTTPField.Name("Tus-Resumable")!
    static let versionHeader = HTTPField.Name("Tus-Version")!
    static let extensionHeader = HTTPField.Name("Tus-Extension")!
    static let maxSize = HTTPField.Name("Tus-Max-Size")!
    static let checksumAlgorithmHeader = HTTPField.Name("Tus-Checksum-Algorithm")!
    static let uploadOffset = HTTPField.Name("Upload-Offset")!
    static let uploadLength = HTTPField.Name("Upload-Length")!
    static let uploadDeferLength = HTTPField.Name("Upload-Defer-Length")!
    static let uploadMetadata = HTTPField.Name("Upload-Metadata")!
    static let uploadExpires = HTTPField.Name("Upload-Expires")!
    static let uploadChecksum = HTTPField.Name("Upload-Checksum")!

    /// 460 Checksum Mismatch (tus' checksum extension).
    static let checksumMismatch = HTTPResponse.Status(code: 460, reasonPhrase: "Checksum Mismatch")

    /// `Upload-Metadata`: comma-separated `key base64value` pairs (a key alone means an empty value).
    /// nil when malformed: a pair with more than two parts, a value that is not base64 or not UTF-8, a
    /// key twice.
    static func metadata(_ header: String?) -> [String: String]? {
        guard let header, !header.trimmingCharacters(in: .whitespaces).isEmpty else { return [:] }
        var result: [String: String] = [:]
        for pair in header.split(separator: ",", omittingEmptySubsequences: false) {
            let parts = pair.trimmingCharacters(in: .whitespaces).split(separator: " ")
            guard (1...2).contains(parts.count), result[String(parts[0])] == nil else { return nil }
            var value = ""
            if parts.count == 2 {
                guard let data = Data(base64Encoded: String(parts[1])), let text = String(data: data, encoding: .utf8) else { return nil }
                value = text
            }
            result[String(parts[0])] = value
        }
        return result
    }

    /// A non-negative decimal (offsets, lengths); nil for anything else (signs, spaces, overflow).
    /// Whether `text` is a whole number of more digits than any upload's length has (16 or more: the draft's parser
    /// takes 15, `number` 18; the largest upload, 10 MiB, has 8) — too large (413), where anything else unreadable is 400.
    static func isHugeNumber(_ text: String?) -> Bool {
        guard let text else { return false }
        let digits = text.trimmingCharacters(in: .whitespaces)
        return digits.utf8.count > 15 && digits.utf8.allSatisfy { (0x30...0x39).contains($0) }
    }

    static func number(_ text: String?) -> Int64? {
        guard let text, !text.isEmpty, text.utf8.count <= 18, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return Int64(text)
    }

    /// `Upload-Checksum: <algorithm> <base64 digest>`.
    struct Checksum {
        enum Algorithm: String { case sha1, sha256 }
        var algorithm: Algorithm
        var digest: [UInt8]

        /// nil: no header; throws a message when present but unusable.
        static func parse(_ header: String?) throws(ChecksumError) -> Checksum? {
            guard let header else { return nil }
            let parts = header.split(separator: " ")
            guard parts.count == 2 else { throw .malformed }
            guard let algorithm = Algorithm(rawValue: parts[0].lowercased()) else { throw .unsupported(String(parts[0])) }
            guard let digest = Data(base64Encoded: String(parts[1])) else { throw .malformed }
            return Checksum(algorithm: algorithm, digest: [UInt8](digest))
        }

        func hasher() -> Hasher { Hasher(algorithm) }
    }

    enum ChecksumError: Error {
        case malformed
        case unsupported(String)
    }

    /// Hashes a request body as it streams.
    struct Hasher {
        private var sha1: Insecure.SHA1?
        private var sha256: SHA256?

        init(_ algorithm: Checksum.Algorithm) {
            switch algorithm {
            case .sha1: sha1 = Insecure.SHA1()
            case .sha256: sha256 = SHA256()
            }
        }

        mutating func update(_ bytes: UnsafeRawBufferPointer) {
            sha1?.update(bufferPointer: bytes)
            sha256?.update(bufferPointer: bytes)
        }

        func finalize() -> [UInt8] {
            if let sha1 { return Array(sha1.finalize()) }
            return Array(sha256!.finalize())
        }
    }
}
