import Foundation
import Testing
@testable import PhotoPrep

@Suite struct QualitySearchTests {
    /// Runs the search against a size function; returns the chosen quality and the encodes used.
    func run(_ size: (Int) -> Int, limit: Int, pixels: Int = 2_621_440, tolerance: Double = 0.05) -> (quality: Int?, encodes: Int, tried: [Int]) {
        var search = QualitySearch(qualities: 50...100, limit: limit, tolerance: tolerance, pixels: pixels)
        var tried: [Int] = []
        while true {
            switch search.next() {
            case .encode(let q):
                #expect(!tried.contains(q), "never encodes the same quality twice")
                tried.append(q)
                search.record(quality: q, size: size(q))
            case .done(let q): return (q, tried.count, tried)
            case .unreachable: return (nil, tried.count, tried)
            }
        }
    }

    /// A photo-like size curve: size ∝ scale factor^-0.6, and 3× more at Q100 than at Q95.
    func curve(base: Double) -> (Int) -> Int {
        { q in Int(base * exp(-0.6 * QualitySearch.logScale(q))) }
    }

    @Test func neverReturnsAnEncodeOverTheBudgetAndIsNearTheBest() {
        for base in stride(from: 100_000.0, through: 9_000_000, by: 137_000) {
            let size = curve(base: base)
            let limit = 512_000
            let best = (50...100).last { size($0) < limit }
            let result = run(size, limit: limit)
            guard let best else {
                #expect(result.quality == nil)
                continue
            }
            let q = try! #require(result.quality)
            #expect(size(q) < limit)
            #expect(q <= best)
            #expect(q == best || Double(size(q)) >= 0.95 * Double(limit), "stopped early only within the tolerance")
            #expect(result.encodes <= 6)
        }
    }

    @Test func zeroToleranceProvesTheLargestQuality() {
        for base in stride(from: 300_000.0, through: 6_000_000, by: 251_000) {
            let size = curve(base: base)
            let best = (50...100).last { size($0) < 512_000 }
            #expect(run(size, limit: 512_000, tolerance: 0).quality == best)
        }
    }

    @Test func nonMonotoneSizesNeverLeadToAnUnverifiedResult() {
        // Q71 is smaller than Q70 here (it happens on flat content at low qualities).
        let sizes: (Int) -> Int = { q in q == 71 ? 400_000 : (q <= 70 ? 430_000 + q * 100 : 600_000 + q * 1000) }
        let result = run(sizes, limit: 500_000)
        #expect(result.quality.map(sizes)! < 500_000)
    }

    @Test func oneEncodeWhenTheBudgetDoesNotBind() {
        let result = run({ _ in 300_000 }, limit: 5_242_880, pixels: 3_145_728)
        #expect(result.quality == 100 && result.encodes == 1)
    }

    @Test func unreachableWhenTheLowestQualityMisses() {
        let result = run({ _ in 900_000 }, limit: 2_048)
        #expect(result.quality == nil)
        #expect(result.tried.contains(50))
    }
}
