#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The search for the lowest JPEG quality whose SSIMULACRA2 score reaches a target, under a byte budget, as a pure
/// state machine: it says which quality to encode next, the caller encodes, scores and reports back.
///
/// A score rises with the quality by about `priorSlope` points a step between qualities 70 and 98 (median of the
/// calibration corpus, `Benchmarks/calibration.sh`), more steeply on some photos than others: the first guess is the
/// quality a typical photo needs (`firstGuess`), then a secant through the two nearest scores (or the prior slope
/// while there is one), always strictly inside the bracket [highest quality that scored too low, lowest that passed].
/// It ends when the bracket is adjacent, when a passing score is within `tolerance` of the target, when the encodes
/// run out (then the lowest pass wins), or when the budget binds: the target needs more bytes than the budget allows
/// (`budgetBound`) or the top quality still scores too low (`targetUnreachable`).
///
/// | seen (target 85)                        | next step                         |
/// |-----------------------------------------|-----------------------------------|
/// | nothing                                 | encode Q87 (first guess)          |
/// | Q87 → 83.1                              | encode Q91 (prior slope, + 1)     |
/// | Q87 → 83.1, Q91 → 86.2                  | encode Q89 (secant)               |
/// | Q88 → 84.9, Q89 → 85.6                  | done, Q89 (adjacent)              |
/// | Q90 → 85.4 (within tolerance)           | done, Q90                         |
/// | Q87 over the budget                     | budget bound (fill the budget)    |
struct TargetSearch {
    enum Step: Equatable {
        case encode(quality: Int)
        /// The lowest quality found that reaches the target.
        case done(quality: Int)
        /// Reaching the target takes more bytes than the budget: the highest quality under it is the best that fits.
        case budgetBound
        /// Even the highest allowed quality scores below the target (it fits the budget).
        case targetUnreachable
    }

    let target: Double
    let qualities: ClosedRange<Int>
    /// Encodes must be strictly smaller than this many bytes.
    let limit: Int
    /// A pass this close above the target ends the search without proving the next quality down fails.
    var tolerance = 0.6
    var maxEncodes = 4
    /// The first quality to try, when the caller knows better than the JPEG table (`typicalScore`): another codec's.
    var firstQuality: Int?
    /// Score points a quality step is assumed to add until two scores are known: for JPEG the calibration corpus's
    /// median between qualities 80 and 96 (0.66 at 1024 px, 0.57 at 2048; single photos 0.47–1.16); another codec sets its own.
    var priorSlope = 0.6
    /// Set when an encode is worth making only under the limit (a WebP beside its JPEG, which is kept otherwise): the
    /// search gives up (`budgetBound`) when its next encode is predicted to reach the limit, instead of proving it with
    /// encodes. Between two encodes, bytes are predicted on the line (in log) through them, which erred high by at most
    /// 1.27× (99 % within 1.17×) on the calibration corpus's WebP thumbnails, 84–100 — so the prediction must pass the
    /// limit by `betweenMargin`; above every encode, from the highest, growing `lowGrowth` a step.
    var predictsSize = false
    static let betweenMargin = 1.3
    /// What a quality step adds to the bytes (log), low: the tenth percentile over three or more steps (the least: 3 %)
    /// for the 512 px WebP thumbnails of the calibration corpus between qualities 80 and 100 (the median: 6 %). Where it
    /// errs low it forgoes a WebP little smaller than its JPEG (`TargetSearchTests`); on that corpus it forgoes none and
    /// saves 5 of 132 encodes (512 px fits, 256 and 128 px squares), against the least growth (3 %).
    static let lowGrowth = 0.04
    /// The most a quality step adds to the bytes (log): 18.1 % on the same thumbnails and the 256 and 128 px squares.
    static let maximumGrowth = 0.2

    /// Each encode's bytes and score (nil: not scored, as a JPEG over its budget is not).
    private(set) var tried: [Int: (size: Int, score: Double?)] = [:]

    init(target: Double, qualities: ClosedRange<Int>, limit: Int) {
        self.target = target
        self.qualities = qualities
        self.limit = limit
    }

    mutating func record(quality: Int, size: Int, score: Double?) {
        tried[quality] = (size, score)
    }

    /// The lowest quality tried that reaches the target under the budget.
    var lowestPass: (quality: Int, score: Double)? {
        scored.filter { $0.size < limit && $0.score >= target }.min { $0.quality < $1.quality }.map { ($0.quality, $0.score) }
    }
    /// The highest quality tried that fits the budget but scores below the target.
    private var highestFail: (quality: Int, score: Double)? {
        scored.filter { $0.size < limit && $0.score < target }.max { $0.quality < $1.quality }.map { ($0.quality, $0.score) }
    }
    /// The lowest quality tried over the budget that was scored and reaches the target: its score still tells the slope.
    private var lowestScoredOver: (quality: Int, score: Double)? {
        scored.filter { $0.size >= limit && $0.score >= target }.min { $0.quality < $1.quality }.map { ($0.quality, $0.score) }
    }
    private var scored: [(quality: Int, size: Int, score: Double)] {
        tried.compactMap { entry in entry.value.score.map { (entry.key, entry.value.size, $0) } }
    }
    /// The lowest quality tried that is over the budget.
    private var lowestOver: Int? { tried.filter { $0.value.size >= limit }.keys.min() }

    func next() -> Step {
        let pass = lowestPass, fail = highestFail
        let high = min(qualities.upperBound, (lowestOver ?? qualities.upperBound + 1) - 1)
        if let pass {
            if pass.quality == qualities.lowerBound || pass.quality - 1 == fail?.quality { return .done(quality: pass.quality) }
            if pass.score - target <= tolerance || tried.count >= maxEncodes { return .done(quality: pass.quality) }
        } else {
            if high < qualities.lowerBound { return .budgetBound }
            if let fail, fail.quality >= high {
                return high == qualities.upperBound && lowestOver == nil ? .targetUnreachable : .budgetBound
            }
            if tried.count >= maxEncodes { return lowestOver == nil && high == qualities.upperBound ? .targetUnreachable : .budgetBound }
        }
        guard !tried.isEmpty else { return .encode(quality: clamp(firstQuality ?? firstGuess, above: nil, below: high + 1)) }
        // Only encodes over the budget so far: the quality a typical photo needs is more than the budget holds — unless
        // the lowest of them was scored and passes (`predictsSize`), and a quality low enough to reach the target may
        // still fit: bytes fall by at most `maximumGrowth` a step.
        guard pass != nil || fail != nil else {
            guard predictsSize, let over = lowestScoredOver, over.quality == lowestOver, let size = tried[over.quality]?.size else { return .budgetBound }
            let quality = clamp(Int((Double(over.quality) - (over.score - target) / priorSlope).rounded(.up)), above: nil, below: over.quality)
            let fits = Double(size) * exp(-Self.maximumGrowth * Double(over.quality - quality)) < Double(limit)
            return quality < over.quality && fits ? .encode(quality: quality) : .budgetBound
        }

        // The next guess: a secant between the bracket's ends, else a step of the prior slope from the nearest score.
        let low = fail?.quality, top = pass?.quality ?? high + 1
        let guess: Double
        if let fail, let upper = pass ?? lowestScoredOver {
            let slope = max((upper.score - fail.score) / Double(upper.quality - fail.quality), 0.05)
            guess = Double(fail.quality) + (target - fail.score) / slope
        } else if let fail {
            guess = Double(fail.quality) + (target - fail.score) / measuredSlope(near: fail.quality) + 1
        } else {
            guess = Double(pass!.quality) - (pass!.score - target) / measuredSlope(near: pass!.quality)
        }
        let quality = clamp(Int(guess.rounded(.up)), above: low, below: top)
        if predictsSize, pass == nil, predictedOverLimit(at: quality) { return .budgetBound }
        return .encode(quality: quality)
    }

    /// Whether an encode at `quality` is expected to take the limit's bytes or more (`predictsSize`).
    private func predictedOverLimit(at quality: Int) -> Bool {
        guard let low = tried.filter({ $0.key < quality }).max(by: { $0.key < $1.key }) else { return false }
        guard let high = tried.filter({ $0.key > quality }).min(by: { $0.key < $1.key }) else {
            return Double(low.value.size) * exp(Self.lowGrowth * Double(quality - low.key)) >= Double(limit)
        }
        let growth = max(0, log(Double(high.value.size) / Double(low.value.size)) / Double(high.key - low.key))
        return Double(low.value.size) * exp(growth * Double(quality - low.key)) >= Self.betweenMargin * Double(limit)
    }

    /// The slope between the two scores tried nearest `quality`, when it is a plausible one; the prior otherwise.
    private func measuredSlope(near quality: Int) -> Double {
        let near = scored.filter { $0.size < limit }.sorted { abs($0.quality - quality) < abs($1.quality - quality) }
        guard near.count >= 2 else { return priorSlope }
        let (a, b) = (near[0], near[1])
        let slope = (a.score - b.score) / Double(a.quality - b.quality)
        return slope > 0.1 && slope < 5 ? slope : priorSlope
    }

    /// Keeps a guess inside the allowed qualities and strictly between `above` and `below`.
    private func clamp(_ quality: Int, above: Int?, below: Int) -> Int {
        let low = max(qualities.lowerBound, (above ?? qualities.lowerBound - 1) + 1)
        let high = min(qualities.upperBound, below - 1)
        return min(max(quality, low), max(low, high))
    }

    /// The quality a typical photo needs for the target at 4:2:0: the calibration corpus's median score by quality,
    /// read backwards.
    private var firstGuess: Int {
        let table = Self.typicalScore
        if target <= table.first!.score { return table.first!.quality }
        for (a, b) in zip(table, table.dropFirst()) where target <= b.score {
            let t = (target - a.score) / (b.score - a.score)
            return a.quality + Int((t * Double(b.quality - a.quality)).rounded(.up))
        }
        return qualities.upperBound
    }

    /// Median SSIMULACRA2 by quality at 4:2:0 with optimised Huffman tables (calibration corpus, `Benchmarks/calibration.sh`).
    /// Medians at 1024 and 2048 px, averaged (21 photos; 1024 px scores run up to 1.5 lower between 84 and 92).
    static let typicalScore: [(quality: Int, score: Double)] = [
        (50, 65.2), (60, 69.1), (70, 74.3), (80, 81.1), (84, 83.5), (86, 85.0), (88, 85.6), (90, 87.0), (92, 87.9),
        (94, 89.5), (96, 91.0), (98, 92.6), (100, 94.0),
    ]
}
