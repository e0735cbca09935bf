import Foundation

/// An address range in CIDR notation (`10.0.0.0/8`, `::1/128`, or one address): the proxies whose
/// `X-Forwarded-For` is believed.
public struct AddressRange: Sendable, Equatable, CustomStringConvertible {
    let network: [UInt8]
    let prefix: Int
    public let description: String

    public init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1).map(String.init)
        guard let first = parts.first, let address = Self.bytes(first) else { return nil }
        let bits = address.count * 8
        guard let prefix = parts.count == 2 ? Int(parts[1]) : bits, (0...bits).contains(prefix) else { return nil }
        network = address
        self.prefix = prefix
        description = text
    }

    /// Does the range hold `address` (an IPv4 or IPv6 address in text; IPv4-mapped IPv6 counts as IPv4)?
    public func contains(_ address: String) -> Bool {
        guard var bytes = Self.bytes(address) else { return false }
        if bytes.count == 16, network.count == 4, bytes[0..<12].elementsEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff]) {
            bytes = Array(bytes[12...])
        }
        guard bytes.count == network.count else { return false }
        for bit in 0..<prefix where (bytes[bit / 8] ^ network[bit / 8]) & (0x80 >> UInt8(bit % 8)) != 0 { return false }
        return true
    }

    /// An address's bytes: 4 for IPv4, 16 for IPv6 (`inet_pton`).
    static func bytes(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }
}
