/// Hand-made PNGs for tests: chunks with their CRC, stored (uncompressed) deflate, any colour type.
public enum TestPNG {
    /// A PNG chunk: length, type, data, CRC.
    public static func chunk(_ type: String, _ data: [UInt8], length: UInt32? = nil) -> [UInt8] {
        let typeBytes = Array(type.utf8)
        return be32(length ?? UInt32(data.count)) + typeBytes + data + be32(UInt32(crc32(typeBytes + data)))
    }

    public static func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }

    public static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    public static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    public static func ihdr(width: UInt32, height: UInt32) -> [UInt8] {
        chunk("IHDR", be32(width) + be32(height) + [8, 2, 0, 0, 0])
    }

    /// A PNG whose header declares `width` × `height` over four bytes of data: what a hostile header looks like.
    public static func declaring(width: UInt32, height: UInt32) -> [UInt8] {
        signature + ihdr(width: width, height: height) + chunk("IDAT", zlibStored([0, 1, 2, 3])) + chunk("IEND", [])
    }

    /// A zlib stream of stored (uncompressed) deflate blocks: enough for a test PNG, no zlib needed.
    public static func zlibStored(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var at = 0
        repeat {
            let count = min(65535, data.count - at)
            let final: UInt8 = at + count == data.count ? 1 : 0
            out += [final, UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8((~count >> 8) & 0xFF)]
            out += data[at..<(at + count)]
            at += count
        } while at < data.count
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in data { a = (a + UInt32(byte)) % 65521; b = (b + a) % 65521 }
        return out + be32(b << 16 | a)
    }

    /// An 8-bit PNG of colour type `colorType` (0 grey, 2 RGB, 4 grey + alpha, 6 RGBA) from its rows.
    /// `extra`: chunks between IHDR and IDAT (PLTE, tRNS, gAMA …); 16-bit rows hold big-endian samples.
    public static func png(width: Int, height: Int, bitDepth: UInt8 = 8, colorType: UInt8, rows: [[UInt8]], extra: [UInt8] = []) -> [UInt8] {
        let raw: [UInt8] = rows.flatMap { row -> [UInt8] in [0] + row }  // filter type 0 on every row
        return signature + chunk("IHDR", be32(UInt32(width)) + be32(UInt32(height)) + [bitDepth, colorType, 0, 0, 0])
            + extra + chunk("IDAT", zlibStored(raw)) + chunk("IEND", [])
    }
}
