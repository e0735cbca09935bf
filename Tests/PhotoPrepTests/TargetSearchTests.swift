import Foundation
import Testing
@testable import PhotoPrep

@Suite struct TargetSearchTests {
    struct Run {
        var step: TargetSearch.Step
        var tried: [Int]
    }

    /// Runs the search against score and size functions of the quality.
    func run(target: Double = 85, limit: Int = .max, score: (Int) -> Double, size: (Int) -> Int = { _ in 1000 }) -> Run {
        var search = TargetSearch(target: target, qualities: 50...100, limit: limit)
        var tried: [Int] = []
        while true {
            let step = search.next()
            guard case .encode(let q) = step else { return Run(step: step, tried: tried) }
            #expect(!tried.contains(q), "never encodes the same quality twice")
            tried.append(q)
            search.record(quality: q, size: size(q), score: size(q) < limit ? score(q) : 0)
        }
    }

    /// Photo-like score curves: rising `slope` points a quality step, reaching `top` at quality 100.
    func curve(top: Double, slope: Double) -> (Int) -> Double {
        { q in top - slope * Double(100 - q) }
    }

    @Test func findsTheLowestPassingQualityOrOneWithinTheTolerance() {
        var encodes: [Int] = []
        for top in stride(from: 88.0, through: 97, by: 0.5) {
            for slope in [0.3, 0.5, 0.7, 0.9, 1.2, 1.6] {
                let score = curve(top: top, slope: slope)
                let result = run(score: score)
                guard case .done(let q) = result.step else {
                    Issue.record("top \(top), slope \(slope): \(result.step)")
                    continue
                }
                #expect(score(q) >= 85, "the result passes")
                let lowest = (50...100).first { score($0) >= 85 }!
                #expect(q == lowest || score(q) - 85 <= 0.6 || result.tried.count >= 4,
                    "top \(top), slope \(slope): Q\(q) (\(score(q))), lowest passing Q\(lowest), tried \(result.tried)")
                #expect(result.tried.count <= 4)
                encodes.append(result.tried.count)
            }
        }
        let mean = Double(encodes.reduce(0, +)) / Double(encodes.count)
        #expect(mean <= 3.2, "mean encodes \(mean)")
    }

    @Test func aTargetTheTopQualityMissesIsUnreachable() {
        let result = run(score: curve(top: 84, slope: 0.7))
        #expect(result.step == .targetUnreachable)
        #expect(result.tried.contains(100))
    }

    @Test func aTargetThatNeedsMoreThanTheBudgetIsBudgetBound() {
        // Passing needs Q90; Q88 and above are over the budget.
        let result = run(limit: 500_000, score: curve(top: 92, slope: 0.7), size: { q in 300_000 + 20_000 * max(0, q - 78) })
        #expect(result.step == .budgetBound)
        #expect(result.tried.count <= 4)
    }

    @Test func aLowestQualityThatPassesEndsTheSearch() {
        let result = run(score: { _ in 99 })
        #expect(result.step == .done(quality: 50) || result.tried.count <= 3)
        if case .done(let q) = result.step { #expect((50...100).contains(q)) }
    }

    @Test func aScoreThatFallsAsTheQualityRisesStillEnds() {
        // Real curves wobble by a point or so: the search must end, with a passing quality.
        let result = run(score: { q in 80 + Double(q % 7) })
        #expect(result.tried.count <= 4)
        if case .done(let q) = result.step { #expect(80 + Double(q % 7) >= 85) }
    }
}
