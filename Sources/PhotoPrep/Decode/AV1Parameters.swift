/// The largest frame an AV1 bitstream codes, read from the sequence header OBU in a HEIF item's `av1C` (AV1-ISOBMFF
/// §2.3.3, which AVIF requires there; AV1 §5.5.1), without decoding anything.
enum AV1Parameters {
    /// `max_frame_width_minus_1 + 1` × `max_frame_height_minus_1 + 1` of the sequence header in `av1C`'s configOBUs,
    /// or nil when it holds none or it does not parse.
    static func maximumFrameSize(av1C: ArraySlice<UInt8>) -> (width: Int, height: Int)? {
        // marker/version, profile/level, tier/depth/chroma, presentation delay; then configOBUs
        av1C.count > 4 ? maximumFrameSize(obus: av1C.dropFirst(4)) : nil
    }

    /// The same from the first sequence header among `obus` (an item's data, when `av1C` holds none: libheif 1.15's
    /// encoder writes it there only), looking at most at the first eight OBUs.
    static func maximumFrameSize(obus: ArraySlice<UInt8>) -> (width: Int, height: Int)? {
        let box = Array(obus)
        var i = 0
        for _ in 0..<8 where i < box.count {
            let header = box[i]
            let type = Int(header >> 3) & 15, extended = header & 4 != 0, sized = header & 2 != 0
            i += extended ? 2 : 1
            var size = box.count - i
            if sized {
                var value = 0, shift = 0
                while true {  // leb128
                    guard i < box.count, shift < 56 else { return nil }
                    value |= Int(box[i] & 0x7F) << shift
                    shift += 7
                    i += 1
                    if box[i - 1] & 0x80 == 0 { break }
                }
                size = value
            }
            guard size >= 0, i + size <= box.count else { return nil }
            if type == 1 { return sequenceHeaderFrameSize(box[i..<(i + size)]) }  // OBU_SEQUENCE_HEADER
            i += size
        }
        return nil
    }

    /// AV1 §5.5.1, up to `max_frame_height_minus_1`.
    static func sequenceHeaderFrameSize(_ obu: ArraySlice<UInt8>) -> (width: Int, height: Int)? {
        var bits = HEVCParameters.Bits(plain: obu)
        guard bits.skip(4), let reduced = bits.read(1) else { return nil }  // seq_profile, still_picture
        if reduced == 1 {
            guard bits.skip(5) else { return nil }  // seq_level_idx[0]
        } else {
            guard let timing = bits.read(1) else { return nil }
            var decoderModel = 0, bufferDelayLength = 0
            if timing == 1 {
                guard bits.skip(64), let equal = bits.read(1) else { return nil }  // units in display tick, time scale
                if equal == 1 { guard bits.uvlc() != nil else { return nil } }
                guard let present = bits.read(1) else { return nil }
                decoderModel = present
                if present == 1 {
                    guard let length = bits.read(5), bits.skip(32 + 5 + 5) else { return nil }
                    bufferDelayLength = length + 1
                }
            }
            guard let initialDelay = bits.read(1), let points = bits.read(5) else { return nil }
            for _ in 0...points {
                guard bits.skip(12), let level = bits.read(5) else { return nil }  // operating_point_idc, seq_level_idx
                if level > 7 { guard bits.skip(1) else { return nil } }  // seq_tier
                if decoderModel == 1 {
                    guard let present = bits.read(1) else { return nil }
                    if present == 1 { guard bits.skip(2 * bufferDelayLength + 1) else { return nil } }
                }
                if initialDelay == 1 {
                    guard let present = bits.read(1) else { return nil }
                    if present == 1 { guard bits.skip(4) else { return nil } }
                }
            }
        }
        guard let widthBits = bits.read(4), let heightBits = bits.read(4), let width = bits.read(widthBits + 1),
            let height = bits.read(heightBits + 1)
        else { return nil }
        return (width + 1, height + 1)
    }
}
