import Foundation
import PhotoPrep

/// A photo handed to a service: bytes in memory or a file. JPEG, PNG, HEIC/HEIF, AVIF or WebP.
public enum PhotoInput: Sendable {
    case bytes([UInt8])
    case file(String)

    /// The bytes, checked by their content to be in a format the pipeline decodes.
    func load() throws(ServiceError) -> [UInt8] {
        let bytes: [UInt8]
        switch self {
        case .bytes(let data):
            bytes = data
        case .file(let path):
            guard let data = FileManager.default.contents(atPath: path) else { throw .unsupportedPhoto("\(path): cannot read the file") }
            bytes = [UInt8](data)
        }
        do {
            _ = try ImageFormat.sniff(bytes)
        } catch {
            throw .unsupportedPhoto("\(error)")
        }
        return bytes
    }
}
