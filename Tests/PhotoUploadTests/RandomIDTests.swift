import Foundation
import PhotoFiles
import Testing

/// Ids and tokens from the system's generator: the shapes the records and URLs expect, and no repeats.
@Suite struct RandomIDTests {
    @Test func uuidsAreVersionFourInLowerCaseAndFoundationReadsThem() {
        var seen = Set<String>()
        for _ in 0..<2000 {
            let id = randomUUID()
            #expect(id.range(of: "^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$", options: .regularExpression) != nil, "\(id)")
            #expect(UUID(uuidString: id)?.uuidString.lowercased() == id)
            seen.insert(id)
        }
        #expect(seen.count == 2000)
    }

    @Test func hexHasTheBytesAskedForAndEveryDigitTurnsUp() {
        for count in [0, 1, 7, 8, 9, 16, 33] {
            #expect(randomHex(byteCount: count).count == 2 * count)
            #expect(randomBytes(count).count == count)
        }
        let digits = Set((0..<200).map { _ in randomHex(byteCount: 16) }.joined())
        #expect(digits == Set("0123456789abcdef"))
        // Not the same byte over and over: 4,096 bytes take more than a few values.
        #expect(Set(randomBytes(4096)).count > 200)
    }
}
