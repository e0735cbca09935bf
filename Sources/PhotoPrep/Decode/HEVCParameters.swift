/// The picture size an HEVC bitstream codes, read from the sequence parameter set in a HEIF item's `hvcC`
/// (ISO/IEC 14496-15 §8.3.3; ITU-T H.265 §7.3.2.2) without decoding anything: what the decoder will allocate,
/// whatever the container declares.
enum HEVCParameters {
    /// The size of the first SPS in `hvcC` less its conformance window (the cropped size a decoder outputs), or nil
    /// when there is none or it does not parse.
    static func pictureSize(hvcC: ArraySlice<UInt8>) -> (width: Int, height: Int)? {
        let box = Array(hvcC)
        guard box.count >= 23 else { return nil }
        var i = 23  // the fixed part; then numOfArrays (byte 22) arrays of NAL units
        for _ in 0..<Int(box[22]) {
            guard i + 3 <= box.count else { return nil }
            let type = box[i] & 0x3F
            let count = Int(box[i + 1]) << 8 | Int(box[i + 2])
            i += 3
            for _ in 0..<count {
                guard i + 2 <= box.count else { return nil }
                let length = Int(box[i]) << 8 | Int(box[i + 1])
                i += 2
                guard i + length <= box.count else { return nil }
                if type == 33 { return spsPictureSize(Array(box[i..<(i + length)])) }  // SPS_NUT
                i += length
            }
        }
        return nil
    }

    /// H.265 §7.3.2.2.1 up to the conformance window, from a whole SPS NAL unit (its 2-byte header first).
    static func spsPictureSize(_ nal: [UInt8]) -> (width: Int, height: Int)? {
        guard nal.count > 2 else { return nil }
        var bits = Bits(rbsp: nal.dropFirst(2))
        guard bits.skip(4), let subLayers = bits.read(3), bits.skip(1) else { return nil }  // vps id; max_sub_layers_minus1; nesting
        // profile_tier_level(1, max_sub_layers_minus1): the general part, then each sub-layer's flags and parts.
        guard bits.skip(96) else { return nil }
        var present: [(profile: Bool, level: Bool)] = []
        for _ in 0..<subLayers {
            guard let profile = bits.read(1), let level = bits.read(1) else { return nil }
            present.append((profile == 1, level == 1))
        }
        if subLayers > 0 { guard bits.skip(2 * (8 - subLayers)) else { return nil } }
        for layer in present {
            guard bits.skip((layer.profile ? 88 : 0) + (layer.level ? 8 : 0)) else { return nil }
        }
        guard bits.unsignedExpGolomb() != nil, let chroma = bits.unsignedExpGolomb(), chroma <= 3 else { return nil }  // sps id; chroma_format_idc
        if chroma == 3 { guard bits.skip(1) else { return nil } }  // separate_colour_plane_flag
        guard let width = bits.unsignedExpGolomb(), let height = bits.unsignedExpGolomb(), let window = bits.read(1) else { return nil }
        guard window == 1 else { return (width, height) }
        guard let left = bits.unsignedExpGolomb(), let right = bits.unsignedExpGolomb(), let top = bits.unsignedExpGolomb(),
            let bottom = bits.unsignedExpGolomb()
        else { return nil }
        // Offsets count chroma samples: 2 luma samples across for 4:2:0 and 4:2:2, 2 down for 4:2:0.
        let (subWidth, subHeight) = chroma == 1 ? (2, 2) : chroma == 2 ? (2, 1) : (1, 1)
        return (max(0, width - subWidth * (left + right)), max(0, height - subHeight * (top + bottom)))
    }

    /// A bit reader, most significant bit first: over a NAL unit's payload with its emulation prevention bytes
    /// (00 00 03) removed (`rbsp:`), or over bytes as they are (`plain:`, AV1's OBUs).
    struct Bits {
        private var bytes: [UInt8] = []
        private var position = 0

        init(plain: ArraySlice<UInt8>) { bytes = Array(plain) }

        init(rbsp escaped: ArraySlice<UInt8>) {
            bytes.reserveCapacity(escaped.count)
            var zeros = 0
            for byte in escaped {
                if zeros >= 2 && byte == 3 {
                    zeros = 0
                    continue
                }
                zeros = byte == 0 ? zeros + 1 : 0
                bytes.append(byte)
            }
        }

        mutating func read(_ count: Int) -> Int? {
            guard count <= 32, position + count <= bytes.count * 8 else { return nil }
            var value = 0
            for _ in 0..<count {
                value = value << 1 | Int(bytes[position >> 3] >> (7 - UInt8(position & 7)) & 1)
                position += 1
            }
            return value
        }

        mutating func skip(_ count: Int) -> Bool {
            guard count >= 0, position + count <= bytes.count * 8 else { return false }
            position += count
            return true
        }

        /// AV1's uvlc(): as ue(v).
        mutating func uvlc() -> Int? { unsignedExpGolomb() }

        /// ue(v): leading zeros, a one, as many bits again (at most 31 zeros: larger is no picture size).
        mutating func unsignedExpGolomb() -> Int? {
            var zeros = 0
            while true {
                guard let bit = read(1) else { return nil }
                if bit == 1 { break }
                zeros += 1
                if zeros > 31 { return nil }
            }
            guard let rest = read(zeros) else { return nil }
            return (1 << zeros) - 1 + rest
        }
    }
}

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
