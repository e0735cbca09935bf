/// `count` bytes from the system's random generator (`getrandom` on Linux), eight a call.
public func randomBytes(_ count: Int) -> [UInt8] {
    var generator = SystemRandomNumberGenerator()
    var bytes: [UInt8] = []
    bytes.reserveCapacity(count + 7)
    while bytes.count < count {
        withUnsafeBytes(of: generator.next() as UInt64) { bytes.append(contentsOf: $0) }
    }
    return Array(bytes.prefix(count))
}

/// `byteCount` random bytes in hex: unguessable ids and tokens.
public func randomHex(byteCount: Int) -> String {
    hex(randomBytes(byteCount))
}

/// A random (version 4) UUID in lower case, as the records' ids are written — from the same generator: Foundation's
/// `UUID()` opens, reads and closes /dev/urandom for each one on Linux.
public func randomUUID() -> String {
    var b = randomBytes(16)
    b[6] = b[6] & 0x0F | 0x40
    b[8] = b[8] & 0x3F | 0x80
    let h = hex(b)
    let u = Array(h.utf8)
    return [u[0..<8], u[8..<12], u[12..<16], u[16..<20], u[20..<32]].map { String(decoding: $0, as: UTF8.self) }.joined(separator: "-")
}
