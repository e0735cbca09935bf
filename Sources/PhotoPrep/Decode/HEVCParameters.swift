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
