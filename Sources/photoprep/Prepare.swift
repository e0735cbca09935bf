import ArgumentParser
import PhotoPrep

struct Prepare: ParsableCommand {
    @Argument var inputs: [String]
    func run() throws {
        let p = PhotoPipeline(preset: .group)
        for i in inputs { let r = try p.prepare(contentsOf: i).report; print(r) }
    }
}
