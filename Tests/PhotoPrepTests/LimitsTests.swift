import Testing
@testable import PhotoPrep
import TestSupport

@Suite struct LimitsTests {
    @Test(arguments: ["edge/huge-header.jpg", "edge/huge-header.png"])
    func refusesHugeHeadersBeforeDecoding(file: String) throws {
        let error = #expect(throws: PhotoPrepError.self) {
            try PhotoPipeline(preset: .group).prepare(contentsOf: Fixture.path(file))
        }
        #expect(error?.kind == .tooLarge)
        #expect(error?.stage == .limits)
        #expect(error?.message.contains("over the limit of 268402689 pixels") == true)
    }

    @Test func limitIsConfigurable() throws {
        var options = PrepareOptions(preset: .group)
        options.maxPixels = 2_000_000
        let error = #expect(throws: PhotoPrepError.self) {
            try PhotoPipeline(options: options).prepare(contentsOf: Fixture.path("photos/storm-1920x1280.jpg"))
        }
        #expect(error?.kind == .tooLarge)
        options.maxPixels = 2_457_600  // exactly 1920 × 1280
        #expect(throws: Never.self) { try PhotoPipeline(options: options).prepare(contentsOf: Fixture.path("photos/storm-1920x1280.jpg")) }
    }

    @Test func twelveBitJPEGIsUnsupported() throws {
        let error = #expect(throws: PhotoPrepError.self) {
            try PhotoPipeline(preset: .group).prepare(contentsOf: Fixture.path("edge/twelve-bit.jpg"))
        }
        #expect(error?.kind == .unsupportedFeature)
        #expect(error?.message.contains("12-bit") == true)
    }

    @Test func missingFileIsAnIOErrorNamingIt() {
        let error = #expect(throws: PhotoPrepError.self) {
            try PhotoPipeline(preset: .group).prepare(contentsOf: "/nonexistent/photo.jpg")
        }
        #expect(error?.kind == .io)
        #expect(error?.description == "/nonexistent/photo.jpg: read failed (I/O error): cannot open: No such file or directory")
    }
}
