public import Foundation

/// A server's data folder as the tests read it: what the local store holds, and the bytes an unfinished upload has.
/// The same for the built binary in its own process and for the router in the test's.
public protocol ServerDataFolder {
    var data: URL { get }
}

extension ServerDataFolder {
    /// The object stored under `key` in the local store.
    public func stored(_ key: String) -> [UInt8]? {
        FileManager.default.contents(atPath: data.appendingPathComponent("storage").appendingPathComponent(key).path).map { [UInt8]($0) }
    }

    /// Files in the local store, relative to it.
    public var storedKeys: [String] {
        let root = data.appendingPathComponent("storage").path
        return (FileManager.default.enumerator(atPath: root)?.compactMap { $0 as? String } ?? []).filter { path in
            var isFolder: ObjCBool = false
            return FileManager.default.fileExists(atPath: root + "/" + path, isDirectory: &isFolder) && !isFolder.boolValue
        }.sorted()
    }

    /// The bytes the server holds for the upload at `location` (its data file), nil once gone.
    public func receivedBytes(_ location: String) -> Int? {
        let id = location.split(separator: "/").last.map(String.init) ?? ""
        let path = data.appendingPathComponent("uploads/\(id).bin").path
        return (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int
    }
}
