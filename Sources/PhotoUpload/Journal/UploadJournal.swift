import Crypto
public import Foundation
import PhotoFiles

/// The on-disk state of unfinished uploads, one small JSON file each, so that a new process
/// continues an upload instead of starting over — and never continues one against other content.
public struct UploadJournal: Sendable {
    public struct Entry: Codable, Sendable, Equatable {
        public var destination: String
        public var key: String
        /// The upload's location at the destination (tus upload URL, or local upload id).
        public var location: String
        /// Bytes the destination acknowledged.
        public var offset: Int64
        public var length: Int64
        /// SHA-256 of the content being uploaded.
        public var contentSHA256: String
        public var updated: Date
        /// When the destination will forget the unfinished upload (tus `Upload-Expires`), if it said.
        public var expires: Date?
        /// The most bytes the destination can hold of this upload (sent, plus a chunk that may have been
        /// under way): a server claiming more on resumption is lying. Nil in older entries.
        public var mayHaveDelivered: Int64? = nil
    }

    public let folder: URL

    public init(folder: URL) {
        self.folder = folder
    }

    func path(destination: String, key: String) -> URL {
        let id = hex(SHA256.hash(data: Data("\(destination)\n\(key)".utf8)).prefix(16))
        return folder.appendingPathComponent("\(id).json")
    }

    public func entry(destination: String, key: String) -> Entry? {
        guard let data = FileManager.default.contents(atPath: path(destination: destination, key: key).path) else { return nil }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try? decoder.decode(Entry.self, from: data)
    }

    /// Writes the entry atomically (temporary file + rename).
    public func save(_ entry: Entry) throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        try encoder.encode(entry).write(to: path(destination: entry.destination, key: entry.key), options: .atomic)
    }

    public func remove(destination: String, key: String) {
        try? FileManager.default.removeItem(at: path(destination: destination, key: key))
    }

    /// Every unfinished upload.
    public func entries() -> [Entry] {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let files = (try? FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)) ?? []
        return files.filter { $0.pathExtension == "json" }.compactMap {
            guard let data = FileManager.default.contents(atPath: $0.path) else { return nil }
            return try? decoder.decode(Entry.self, from: data)
        }
    }
}
