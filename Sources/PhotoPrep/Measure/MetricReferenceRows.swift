/// The reference image's side of one SSIMULACRA2 scale, kept by a first score so that later scores against the same
/// reference take it instead of computing it again (`ScoringReference`): per row, the reference's three XYB planes and
/// the vertical blur of a and a² per channel — 9 floats a pixel, 36 bytes.
final class MetricReferenceRows {
    let width: Int
    let height: Int
    private let storage: UnsafeMutablePointer<Float>

    init(width: Int, height: Int) {
        self.width = width
        self.height = height
        storage = .allocate(capacity: 9 * width * height)  // each row initialised by the score that keeps it
    }

    deinit { storage.deallocate() }

    /// Row `row` of the reference's XYB channel `channel`.
    func xyb(_ row: Int, _ channel: Int) -> UnsafeMutablePointer<Float> {
        storage + (row * 9 + channel) * width
    }

    /// Row `row` of the vertically blurred a (`square` false) or a² (`square` true) of channel `channel`.
    func blurred(_ row: Int, square: Bool, _ channel: Int) -> UnsafeMutablePointer<Float> {
        storage + (row * 9 + 3 + (square ? 3 : 0) + channel) * width
    }
}
