import Testing
@testable import PhotoPrep
import TestSupport

@Suite struct JPEGSegmentsTests {
    @Test func largeICCProfilesAreSplitAndReassembled() throws {
        // A 150 000-byte profile needs three APP2 segments.
        var profile = [UInt8](repeating: 0, count: 150_000)
        for i in profile.indices { profile[i] = UInt8(truncatingIfNeeded: i &* 31 &+ i >> 8) }
        let segments = try #require(JPEGSegments.iccSegments(profile))
        #expect(segments.count == profile.count + 3 * 18)
        let jpeg = try Fixture.bytes("edge/progressive.jpg")
        let withProfile = jpeg.withUnsafeBytes { JPEGSegments.inserting(segments, into: $0) }
        let structure = try JPEGStructure.parse(withProfile)
        #expect(structure.iccProfile == profile)
        #expect(try decodeJPEG(withProfile) == decodeJPEG(jpeg))
    }

    @Test func truncatedHeaderIsReported() throws {
        let jpeg = Array(try Fixture.bytes("edge/progressive.jpg").prefix(100))
        let error = #expect(throws: PhotoPrepError.self) { try JPEGStructure.parse(jpeg) }
        #expect(error?.message.contains("truncated") == true)
    }
}
