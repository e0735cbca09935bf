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
    var bytes = randomBytes(16)
    bytes[6] = bytes[6] & 0x0F | 0x40  // version 4
    bytes[8] = bytes[8] & 0x3F | 0x80  // RFC 9562's variant
    var text = hex(bytes)
    for at in [20, 16, 12, 8] { text.insert("-", at: text.index(text.startIndex, offsetBy: at)) }
    return text
}
