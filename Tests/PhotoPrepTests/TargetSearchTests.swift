import Foundation
import Testing
@testable import PhotoPrep

@Suite struct TargetSearchTests {
    struct Run {
        var step: TargetSearch.Step
        var tried: [Int]
    }

    /// Runs the search against score and size functions of the quality.
    func run(
        target: Double = 85, limit: Int = .max, score: (Int) -> Double, size: (Int) -> Int = { _ in 1000 },
        predictingSize: Bool = false, scoringOverLimit: Bool = false, maxEncodes: Int = 4, first: Int? = nil
    ) -> Run {
        var search = TargetSearch(target: target, qualities: 50...100, limit: limit)
        search.predictsSize = predictingSize
        search.maxEncodes = maxEncodes
        search.firstQuality = first
        var tried: [Int] = []
        while true {
            let step = search.next()
            guard case .encode(let q) = step else { return Run(step: step, tried: tried) }
            #expect(!tried.contains(q), "never encodes the same quality twice")
            tried.append(q)
            search.record(quality: q, size: size(q), score: size(q) < limit || scoringOverLimit ? score(q) : nil)
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

    /// Bytes growing `growth` (log) a quality step from `base` at quality 90: within the 3–18 % a step WebP thumbnails
    /// grow by on the calibration corpus.
    func bytes(_ base: Double, growth: Double) -> (Int) -> Int {
        { q in Int(base * exp(growth * Double(q - 90))) }
    }

    /// Giving up on a WebP that would have fitted is the price of fewer encodes: rare (under a tenth of the searches where
    /// one fits, on these curves) and cheap — the WebP forgone would have saved under a tenth of the JPEG's bytes, under a
    /// quarter where its bytes grow slower than `lowGrowth` a step (one WebP thumbnail in ten on the calibration corpus).
    @Test func predictingSizeGivesUpEarlierAndOnlyOnWebPsNearTheLimit() {
        var withPrediction = 0, without = 0, hopeless = 0, forgone = 0, fitting = 0
        for top in stride(from: 88.0, through: 97, by: 1) {
            for slope in [0.5, 0.7, 0.9, 1.2] {
                for growth in [0.03, 0.07, 0.12] {
                    for limit in [8_000, 10_000, 13_000, 17_000] {
                        let score = curve(top: top, slope: slope), size = bytes(10_000, growth: growth)
                        let lowestFit = (50...100).first { score($0) >= 85 && size($0) < limit }
                        let predicted = run(limit: limit, score: score, size: size, predictingSize: true, scoringOverLimit: true, maxEncodes: 5)
                        let proved = run(limit: limit, score: score, size: size, scoringOverLimit: true, maxEncodes: 5)
                        if case .done(let q) = predicted.step {
                            #expect(score(q) >= 85 && size(q) < limit, "a result passes under the limit")
                            fitting += 1
                        } else if let lowestFit {
                            // Forgone: a WebP within a quarter of the JPEG's bytes, a tenth unless its bytes grow slowly.
                            let saving = 1 - Double(size(lowestFit)) / Double(limit)
                            #expect(saving < (growth < TargetSearch.lowGrowth ? 0.25 : 0.1),
                                    "top \(top), slope \(slope), growth \(growth), limit \(limit): gave up after \(predicted.tried), Q\(lowestFit) fits with \(size(lowestFit)) bytes")
                            forgone += 1
                        }
                        if lowestFit == nil {
                            hopeless += 1
                            withPrediction += predicted.tried.count
                            without += proved.tried.count
                        }
                    }
                }
            }
        }
        #expect(hopeless > 0 && withPrediction < without, "encodes where nothing fits: \(withPrediction) predicting, \(without) proving")
        #expect(forgone * 10 < forgone + fitting, "\(forgone) WebPs forgone, \(fitting) found")
    }

    @Test func aPassOverTheLimitLeadsDownToOneUnderItWhenScoredAndPredicting() {
        // Q90 scores 89, 4 % over the limit; Q84 to Q89 pass under it.
        let score = curve(top: 95, slope: 0.6), size = bytes(10_400, growth: 0.06)
        let predicted = run(limit: 10_000, score: score, size: size, predictingSize: true, scoringOverLimit: true, first: 90)
        guard case .done(let q) = predicted.step else { Issue.record("\(predicted.step) after \(predicted.tried)"); return }
        #expect(score(q) >= 85 && size(q) < 10_000)
        #expect(run(limit: 10_000, score: score, size: size, scoringOverLimit: true, first: 90).step == .budgetBound, "without predicting, an encode over the limit ends it")
    }
}
