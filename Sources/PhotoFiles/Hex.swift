/// Lower-case hexadecimal, as hashes are written in journals, signatures, ETags and ids.
@inlinable public func hex<D: Sequence>(_ bytes: D) -> String where D.Element == UInt8 {
    var text = ""
    text.reserveCapacity(bytes.underestimatedCount * 2)
    let digits = Array("0123456789abcdef".utf8)
    for byte in bytes {
        text.unicodeScalars.append(Unicode.Scalar(digits[Int(byte >> 4)]))
        text.unicodeScalars.append(Unicode.Scalar(digits[Int(byte & 0x0F)]))
    }
    return text
}
