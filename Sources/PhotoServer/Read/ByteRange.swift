import Foundation

/// One `Range: bytes=…` (RFC 9110 §14.1.2) against a representation of `size` bytes.
enum ByteRange: Equatable {
    /// No range to honour: the header is not one single bytes range (several are answered whole, too).
    case whole
    case part(ClosedRange<Int>)
    /// A valid range that starts past the end, or an empty suffix: 416.
    case unsatisfiable

    static func parse(_ header: String, size: Int) -> ByteRange {
        let header = header.trimmingCharacters(in: .whitespaces)
        guard header.lowercased().hasPrefix("bytes="), !header.contains(",") else { return .whole }
        let spec = header.dropFirst("bytes=".count).trimmingCharacters(in: .whitespaces)
        let parts = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        guard parts.count == 2, parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }) else { return .whole }
        if parts[0].isEmpty {
            // The last n bytes.
            guard let n = Int(parts[1]) else { return .whole }
            guard n > 0, size > 0 else { return .unsatisfiable }
            return .part(max(0, size - n)...(size - 1))
        }
        guard let first = Int(parts[0]) else { return .whole }
        let last = parts[1].isEmpty ? size - 1 : Int(parts[1]) ?? -1
        guard last >= first else { return parts[1].isEmpty ? .unsatisfiable : .whole }
        guard first < size else { return .unsatisfiable }
        return .part(first...min(last, size - 1))
    }
}
