#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Writes one compact JSON object and a newline to standard output (the `--json` format of every command).
package func printJSONLine(_ value: some Encodable) {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    guard let data = try? encoder.encode(value) else { return }
    StandardStream.output.write([UInt8](data) + [UInt8(ascii: "\n")])
}
